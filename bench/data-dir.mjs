// The embedded service's data directory over one long `say`: its size on
// disk (database and write-ahead log) before, right after a 40,000-character
// `say`, once the resume window has passed (the local service prunes by
// itself), after `data prune --older-than 0`, and after `data stop`.
// Targets: within 20 MiB of the start once the window passed, within 5 MiB
// after the prune, write-ahead log included.
//
// Run `npm run build` first. A fresh home and data directory in the system's
// temporary folder; the tone engine (its audio is as large as speech's).
// Writes bench/out/data-dir.json.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machine, ROOT, writeResults } from './_common.mjs';

const CHARACTERS = 40_000;
const RESUME_WINDOW = '5s';
const MiB = 1_048_576;
const TARGET = { afterWindowMiB: 20, afterPruneMiB: 5 };
const PARAGRAPH = 'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! How vexingly quick daft zebras jump? ';

const home = mkdtempSync(join(tmpdir(), 'voxpipe-bench-data-'));
const dataDir = join(home, 'data');
const env = { PATH: process.env.PATH ?? '', HOME: home, VOXPIPE_DATA_DIR: dataDir, VOXPIPE_RESUME_WINDOW: RESUME_WINDOW, VOXPIPE_DAEMON_IDLE: '10m' };
const textFile = join(home, 'long.txt');
writeFileSync(textFile, PARAGRAPH.repeat(Math.ceil(CHARACTERS / PARAGRAPH.length)).slice(0, CHARACTERS));

function voxpipe(args, input) {
  const res = spawnSync(process.execPath, [join(ROOT, 'bin/voxpipe.js'), ...args], { env, input, encoding: 'utf8', maxBuffer: 64 * MiB });
  if (res.status !== 0) throw new Error(`voxpipe ${args.join(' ')} exited ${res.status}: ${res.stderr}`);
  return res.stdout;
}

function bytesUnder(path) {
  let info;
  try {
    info = statSync(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.size;
  return readdirSync(path).reduce((n, entry) => n + bytesUnder(join(path, entry)), 0);
}

const size = () => ({ totalMiB: mib(bytesUnder(dataDir)), walMiB: mib(bytesUnder(join(dataDir, 'pg', 'pg_wal'))) });
const mib = (bytes) => Math.round((bytes / MiB) * 10) / 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  // The directory as a user has it after a first command.
  voxpipe(['say', 'Hello.', '--engine', 'tone', '--out', join(home, 'hello.wav')]);
  const start = size();
  const t0 = Date.now();
  voxpipe(['say', '--engine', 'tone', '--out', join(home, 'long.wav')], readFileSync(textFile, 'utf8'));
  const sayMs = Date.now() - t0;
  const audioMiB = mib(statSync(join(home, 'long.wav')).size);
  const afterSay = size();
  // The service prunes once the window has passed (it looks every second, and trims the log every 5 s).
  let afterWindow = size();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    await sleep(1_000);
    const shown = JSON.parse(voxpipe(['data', '--json']));
    afterWindow = size();
    if (shown.service?.lastPrune && Date.parse(shown.service.lastPrune) > t0 + sayMs && afterWindow.totalMiB - start.totalMiB <= TARGET.afterWindowMiB) break;
  }
  const pruned = JSON.parse(voxpipe(['data', 'prune', '--older-than', '0', '--json']));
  const afterPrune = size();
  voxpipe(['data', 'stop']);
  const afterStop = size();
  const results = {
    bench: 'data-dir',
    when: new Date().toISOString(),
    characters: CHARACTERS,
    resumeWindow: RESUME_WINDOW,
    sayMs,
    audioMiB,
    start,
    afterSay,
    afterWindow,
    afterPrune,
    afterStop,
    prunedRecords: pruned.total,
    met: {
      afterWindow: afterWindow.totalMiB - start.totalMiB <= TARGET.afterWindowMiB,
      afterPrune: afterPrune.totalMiB - start.totalMiB <= TARGET.afterPruneMiB,
    },
    machine: machine(),
  };
  console.log(`a ${CHARACTERS}-character say (${audioMiB} MiB of audio, ${(sayMs / 1000).toFixed(1)} s); data directory in MiB (write-ahead log):`);
  for (const key of ['start', 'afterSay', 'afterWindow', 'afterPrune', 'afterStop']) console.log(`  ${key.padEnd(12)} ${String(results[key].totalMiB).padStart(7)} (${results[key].walMiB})`);
  console.log(`targets: within ${TARGET.afterWindowMiB} MiB once the window passed ${results.met.afterWindow ? 'met' : 'MISSED'}; within ${TARGET.afterPruneMiB} MiB after data prune ${results.met.afterPrune ? 'met' : 'MISSED'}`);
  console.log(`wrote ${writeResults('data-dir', results)}`);
} finally {
  spawnSync(process.execPath, [join(ROOT, 'bin/voxpipe.js'), 'data', 'stop'], { env });
  rmSync(home, { recursive: true, force: true });
}
