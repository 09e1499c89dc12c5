/**
 * The CLI says what is true. `bench --plot x.png` refuses
 * (it writes SVG); Ctrl-C on a transcoded output reports the bytes and
 * seconds the file holds; `bench` off a terminal shows progress lines and
 * no MaxListenersExceededWarning; `serve --faults` names an unknown fault.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STOP_CAUSES, type StopCause } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-cli-small-lies';
const env = (extra: Record<string, string> = {}) => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: KEY, ...extra });

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'lies' }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-lies-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('bench --plot', () => {
  it('a name other than .svg is refused before anything runs, and no file is written', async () => {
    const png = join(dir, 'chart.png');
    const io = fakeIo(env());
    expect(await main(['bench', '--plot', png, '--runs', '1', '--warmup', '0'], io)).toBe(2);
    expect(io.err()).toMatch(/invalid_arguments: --plot writes an SVG chart; name the file \.svg/);
    expect(existsSync(png)).toBe(false);
  });
});

describe('bench off a terminal', () => {
  it('prints progress lines, and no MaxListenersExceededWarning with more than 10 streams a run', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const io = fakeIo(env({ VOXPIPE_PROGRESS_MS: '10' }));
      const code = await main(['bench', '--transports', 'realtime-reliable', '--texts', 'short', '--concurrency', '1,11,12', '--runs', '1', '--warmup', '0'], io);
      expect(code).toBe(0);
      expect(io.err()).toMatch(/^voxpipe: bench: \d+\/\d+ runs/m);
    } finally {
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w === 'MaxListenersExceededWarning')).toEqual([]);
  }, 120_000);
});

describe('Ctrl-C on a transcoded output', () => {
  it('says the bytes and seconds the mp3 holds', async () => {
    const out = join(dir, 'cut.mp3');
    const stdin = new PassThrough();
    let interrupt: ((cause: StopCause) => void) | undefined;
    const io = { ...fakeIo(env(), stdin), onInterrupt: (handler: (cause: StopCause) => void) => ((interrupt = handler), () => (interrupt = undefined)) };
    // The encoder may hold its output until the end: wait for the service to have charged a segment (realtime charges at its first audio).
    const deadline = Date.now() + 20_000;
    const charged = async () => {
      const usage = (await (await fetch(`${server.baseUrl}/usage`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { apiUsage: { charges: number } };
      return usage.apiUsage.charges;
    };
    const before = await charged();
    const done = main(['speak', '--out', out], io);
    stdin.write('A first sentence that is spoken at once. And a second one, to have a few seconds of audio. ');
    while ((await charged()) <= before) {
      if (Date.now() > deadline) throw new Error('no audio sent');
      await new Promise((r) => setTimeout(r, 20));
    }
    interrupt!(STOP_CAUSES.SIGINT);
    expect(await done).toBe(130);
    const size = (await stat(out)).size;
    const note = io.err().split('\n').find((l) => l.includes('interrupted'))!;
    const m = note.match(/kept .*cut\.mp3 \((\d+) bytes; ([\d.]+) s of audio/);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(size);
    expect(size).toBeGreaterThan(0);
    expect(Number(m![2])).toBeGreaterThan(0);
  }, 30_000);
});

describe('serve --faults', () => {
  it.each([
    ['{"nope":1}', /unknown fault "nope"; the faults are realtimeClose/],
    ['{"realtimeClose":{"afterAudioFrame":5,"code":1012}}', /realtimeClose has no "afterAudioFrame"/],
  ])('%s is a usage error naming it', async (faults, message) => {
    const io = fakeIo({});
    expect(await main(['serve', '--port', '0', '--engine', 'tone', '--faults', faults], io)).toBe(2);
    expect(io.err()).toMatch(message);
  });
});
