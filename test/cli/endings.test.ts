/**
 * Every way a run can end leaves a usable file: SIGTERM, SIGHUP, `timeout`,
 * a closed standard output, and the signals a user sends to `npx voxpipe`
 * (npm runs the bin through `sh -c`, which passes none on). Each leaves a
 * WAV whose header sizes match its bytes, one note saying what it kept, the
 * exit code of the signal, and no voxpipe process behind. The real binary on
 * the embedded server, in-process (--ephemeral: no local service to outlive
 * the command by design).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'voxpipe.js');
const dir = mkdtempSync(join(tmpdir(), 'voxpipe-endings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV = { ...process.env, VOXPIPE_BASE_URL: '', VOXPIPE_API_KEY: '', npm_config_update_notifier: 'false', npm_config_fund: 'false' };
const SPEAK = ['speak', '--ephemeral', '--engine', 'tone', '--format', 'pcm'];
const SAMPLE_BYTES_PER_S = 48_000; // 24 kHz, 16-bit mono

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** Processes whose command line names `marker` (a file unique to one test): what the run left behind. */
function processesNaming(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

interface Run {
  child: ChildProcess;
  /** Writes to the run's standard input. */
  write: (text: string) => void;
  stderr: () => string;
  exited: Promise<number | null>;
}

let fifos = 0;

function start(command: string, args: string[]): Run {
  // Standard input is a FIFO this test holds open, as a terminal or an LLM
  // piping into `npx voxpipe speak` would: a pipe of the child's own would be
  // closed by Node when npm exits, and an end of input is not a stop.
  const fifo = join(dir, `stdin-${++fifos}`);
  execFileSync('mkfifo', [fifo]);
  const stdin = openSync(fifo, 'r+');
  const child = spawn(command, args, { cwd: ROOT, env: ENV, stdio: [stdin, 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // As a shell reports it: 128 + the signal's number when killed by one.
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + constants.signals[signal] : null))));
  const write = (text: string) => void writeSync(stdin, text);
  // Standard input stays open: the request is still running when the run is stopped.
  write('The first sentence is spoken right away. And then there is more. ');
  void exited.then(() => closeSync(stdin));
  return { child, write, stderr: () => stderr, exited };
}

/** The WAV's header sizes match its bytes, and the note says its size and length. */
function expectKept(out: string, note: string, cause: RegExp): void {
  const wav = readFileSync(out);
  expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
  const dataBytes = wav.readUInt32LE(40);
  expect(dataBytes).not.toBe(0xffff_ffff);
  expect(44 + dataBytes + (dataBytes % 2)).toBe(wav.length);
  expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
  const lines = note.trim().split('\n').filter((l) => !l.includes('tone engine') && !l.includes(' of audio received'));
  expect(lines).toHaveLength(1);
  const kept = lines[0]!.match(/^voxpipe: (.*); kept .*\.wav \((\d+) bytes; ([\d.]+) s of audio; \d+ bytes of pcm received\)$/);
  expect(kept, lines[0]).not.toBeNull();
  expect(kept![1]).toMatch(cause);
  expect(Number(kept![2])).toBe(wav.length);
  expect(Number(kept![3])).toBeCloseTo(dataBytes / SAMPLE_BYTES_PER_S, 1);
}

describe('a run stopped by a signal keeps a valid file and says so', () => {
  it.each([
    ['SIGTERM', 143, /^terminated \(SIGTERM\)$/],
    ['SIGHUP', 129, /^hung up \(SIGHUP\)$/],
  ] as const)('%s: exit %i', async (signal, code, cause) => {
    const out = join(dir, `${signal}.wav`);
    const run = start(process.execPath, [BIN, ...SPEAK, '--out', out]);
    await until(() => sizeOf(out) > 44 + 4_800, 30_000);
    run.child.kill(signal);
    expect(await run.exited).toBe(code);
    expectKept(out, run.stderr(), cause);
    expect(processesNaming(out)).toEqual([]);
  }, 60_000);

  it('one stop delivered twice (timeout signals the process and its group): still one valid file, one note', async () => {
    const out = join(dir, 'twice.wav');
    const run = start(process.execPath, [BIN, ...SPEAK, '--out', out]);
    await until(() => sizeOf(out) > 44 + 4_800, 30_000);
    run.child.kill('SIGTERM');
    // Repeats while the stop finishes the file, as `timeout` and a terminal's job control send them.
    for (let i = 0; i < 20 && run.child.exitCode === null && run.child.signalCode === null; i++) {
      await new Promise((r) => setTimeout(r, 5));
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toBe(143);
    expectKept(out, run.stderr(), /^terminated \(SIGTERM\)$/);
  }, 60_000);

  it('timeout 10 voxpipe ...: SIGTERM after 10 s, exit 124', async () => {
    const out = join(dir, 'timeout.wav');
    const run = start('timeout', ['10', process.execPath, BIN, ...SPEAK, '--out', out]);
    expect(await run.exited).toBe(124);
    expect(sizeOf(out)).toBeGreaterThan(44);
    expectKept(out, run.stderr(), /^terminated \(SIGTERM\)$/);
    expect(processesNaming(out)).toEqual([]);
  }, 60_000);
});

describe('standard output closed by its reader', () => {
  it('--out - | head: stops the request, one note, exit 141, nothing left running', async () => {
    // Without --format pcm: a WAV stream (its header says: length unknown).
    const run = start(process.execPath, [BIN, 'speak', '--ephemeral', '--engine', 'tone', '--out', '-']);
    const received: Buffer[] = [];
    let got = 0;
    await new Promise<void>((resolve) => {
      run.child.stdout!.on('data', (chunk: Buffer) => {
        received.push(chunk);
        got += chunk.length;
        if (got > 44 + 4_800) {
          run.child.stdout!.destroy();
          resolve();
        }
      });
    });
    // Something is still to come: more text arrives after the reader left.
    run.write('A third sentence, written after the reader went away, so that audio keeps coming. ');
    expect(await run.exited).toBe(141);
    const head = Buffer.concat(received);
    expect(head.toString('ascii', 0, 4)).toBe('RIFF');
    const lines = run.stderr().trim().split('\n').filter((l) => !l.includes('tone engine') && !l.includes('standard output: WAV'));
    expect(lines).toEqual([expect.stringMatching(/^voxpipe: standard output was closed; \d+ bytes of audio written to standard output before that \([\d.]+ s of audio\)$/)]);
    // In-process (--ephemeral): the one process is gone.
    expect(() => process.kill(run.child.pid!, 0)).toThrow();
  }, 60_000);
});

/**
 * `npx voxpipe` here resolves the worktree's own bin (npm links the package
 * into its npx cache), through `npm exec` and `sh -c`: the signal goes to
 * npm, as `kill -INT <npx pid>` does.
 */
describe('signals sent to npx reach voxpipe', () => {
  it.each([
    ['SIGINT', 130, /^interrupted$/],
    ['SIGTERM', 143, /^the command that started voxpipe went away$/],
    ['SIGHUP', 129, /^the command that started voxpipe went away$/],
  ] as const)('%s to npx', async (signal, code, cause) => {
    const out = join(dir, `npx-${signal}.wav`);
    const run = start('npx', ['voxpipe', ...SPEAK, '--out', out]);
    await until(() => sizeOf(out) > 44 + 4_800, 100_000);
    run.child.kill(signal);
    // npm ends with the signal (SIGINT: once voxpipe ended; SIGTERM, SIGHUP: at once).
    expect(await run.exited).toBe(code);
    await until(() => processesNaming(out).length === 0, 10_000);
    expectKept(out, run.stderr(), cause);
  }, 150_000);

  it('serve --demo stopped through npx: its port no longer answers, no process left', async () => {
    const key = `sk-endings-${process.pid}-${Date.now()}`;
    const run = start('npx', ['voxpipe', 'serve', '--port', '0', '--engine', 'tone', '--demo', '--api-key', key]);
    let stdout = '';
    run.child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    await until(() => stdout.includes('\n'), 100_000);
    const { rootUrl } = JSON.parse(stdout.split('\n')[0]!) as { rootUrl: string };
    expect((await fetch(`${rootUrl}/demo`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(143);
    await until(() => processesNaming(key).length === 0, 15_000);
    await expect(fetch(`${rootUrl}/demo`)).rejects.toThrow();
    expect(run.stderr()).toMatch(/the command that started voxpipe went away: draining/);
  }, 150_000);
});
