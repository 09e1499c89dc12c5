import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { axesFromArgs } from '../../src/cli/bench.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { fakeIo } from '../helpers/fake-io.js';

let server: ReferenceServer;
let dir: string;
const KEY = 'sk-test-cli-bench';

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u1' }] });
  dir = await mkdtemp(join(tmpdir(), 'voxpipe-bench-'));
});
afterAll(async () => {
  await server.close();
});

const env = (key = KEY) => ({ VOXPIPE_BASE_URL: server.baseUrl, VOXPIPE_API_KEY: key });

describe('voxpipe bench (smoke: no timed assertions)', () => {
  it('--runs 2 --json prints one JSON document with every case and figure; table on stderr; plot and out files', async () => {
    const plot = join(dir, 'ttfa.svg');
    const out = join(dir, 'bench.json');
    const io = fakeIo(env());
    const code = await main(['bench', '--runs', '2', '--warmup', '0', '--transports', 'realtime-reliable,realtime-simple,sync', '--json', '--plot', plot, '--out', out], io);
    expect(code).toBe(0);
    const lines = io.out().trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!);
    expect(report).toMatchObject({ tool: 'voxpipe bench', schemaVersion: 1, service: { embedded: false, baseUrl: server.baseUrl, capabilities: 'capabilities' }, method: { runs: 2, warmup: 0 } });
    expect(report.machine.cpus).toBeGreaterThan(0);
    expect(report.cases.map((c: { id: string }) => c.id)).toEqual([
      'realtime-reliable pcm short c1 cold',
      'realtime-reliable pcm short c1 warm',
      'realtime-simple pcm short c1 cold',
      'realtime-simple pcm short c1 warm',
      'sync pcm short c1 cold',
      'sync pcm short c1 warm',
    ]);
    for (const c of report.cases) {
      expect(c).toMatchObject({ samples: 2, errors: 0, errorCodes: {}, retries: 0, format: 'pcm', model: 'svc-s21pro-flash', text: 'short', concurrency: 1 });
      for (const k of ['min', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'max', 'mean', 'iqr']) expect(typeof c.ttfaMs[k]).toBe('number');
      expect(c.ttfaMs.n).toBe(2);
      expect(c.raw.ttfaMs).toHaveLength(2);
      expect(c.rtf.p50).toBeGreaterThan(0);
      expect(c.audioMs.p50).toBeGreaterThan(0);
      expect(c.underruns).toHaveProperty('total');
      // connect time is kept apart: realtime only
      if (c.transport.startsWith('realtime')) expect(c.connectMs.n).toBe(2);
      else expect(c.connectMs).toBeNull();
    }
    expect(io.err()).toMatch(/TTFA p50/);
    expect(io.err()).toContain('realtime-simple pcm short c1 warm');
    expect(io.err()).not.toContain('\r'); // no progress bar where stderr is not a TTY
    expect(io.err()).not.toContain(KEY);
    expect(lines[0]).not.toContain(KEY);
    const svg = await readFile(plot, 'utf8');
    expect(svg).toMatch(/^<svg /);
    expect(svg.match(/<circle /g)).toHaveLength(12);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(report);
  });

  it('sweeps formats from the capabilities route and skips what a transport cannot do', async () => {
    const io = fakeIo(env());
    const code = await main(['bench', '--runs', '1', '--warmup', '0', '--transports', 'compat', '--formats', 'wav,opus', '--warm', '--json', '--progress'], io);
    expect(code).toBe(0);
    const report = JSON.parse(io.out());
    expect(report.cases.map((c: { id: string }) => c.id)).toEqual(['compat wav short c1 warm']);
    expect(report.skipped[0].reason).toMatch(/no opus/);
    expect(io.err()).toContain('\r['); // --progress draws the bar anyway
  });

  it('exits 1 naming the code when nothing could be measured', async () => {
    const io = fakeIo(env('sk-not-a-key'));
    const code = await main(['bench', '--runs', '1', '--warmup', '0', '--transports', 'realtime-reliable', '--warm'], io);
    expect(code).toBe(1);
    expect(io.err()).toMatch(/voxpipe: error unauthorized: every stream failed/);
  });

  it('refuses bad arguments with exit 2', async () => {
    for (const args of [['--transports', 'pigeon'], ['--runs', '0'], ['--concurrency', '1.5'], ['--both', '--cold'], ['extra']]) {
      const io = fakeIo(env());
      expect(await main(['bench', ...args], io)).toBe(2);
      expect(io.err()).toMatch(/^voxpipe: error invalid_arguments: /);
    }
  });
});

describe('bench axes from arguments', () => {
  it('defaults: realtime both modes, sync and compat; pcm; default model, first voice; short; 1 stream; cold and warm', () => {
    expect(axesFromArgs({})).toEqual({
      transports: ['realtime-reliable', 'realtime-simple', 'sync', 'compat'],
      formats: ['pcm'],
      models: 'default',
      voices: 'first',
      texts: ['short'],
      concurrency: [1],
      variants: ['cold', 'warm'],
    });
  });

  it('all, lists and single variants', () => {
    const a = axesFromArgs({ transports: 'all', formats: 'all', models: 'all', voices: 'a,b', texts: 'all', concurrency: '1, 10,100', cold: true });
    expect(a.transports).toContain('async');
    expect(a).toMatchObject({ formats: 'all', models: 'all', voices: ['a', 'b'], texts: ['short', 'medium', 'long'], concurrency: [1, 10, 100], variants: ['cold'] });
    expect(axesFromArgs({ cold: true, warm: true }).variants).toEqual(['cold', 'warm']);
  });
});
