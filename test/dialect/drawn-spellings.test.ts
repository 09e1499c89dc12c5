/**
 * The drawn dialects spell the fields the client reads outside the
 * client's own alias table (src/protocol/server-reader.ts), so the reader
 * must find them by form (case, separators, prefix, nesting) or by meaning
 * (an ack answers the text frame before it, a completion the segment open,
 * audio is the frame's bytes). The generator never reads the table (the
 * server imports no client code: test/layers.test.ts); this test does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { readServerFrame } from '../../src/protocol/wire.js';
import { FIELD_ALIASES } from '../../src/protocol/server-reader.js';
import { describeDialect, dialectOf, startServer, type DialectName, type ReferenceServer } from '../../src/server/index.js';
import { drawRandomDialect, UNKNOWN_AUDIO_LABEL, type RandomDraw } from '../../src/server/dialect-random.js';
import { fakeIo } from '../helpers/fake-io.js';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every name the client's reader knows, for any field. */
const KNOWN: ReadonlySet<string> = new Set(Object.values(FIELD_ALIASES).flat());

const SEEDS = Array.from({ length: 300 }, (_, i) => `spell-${i}`);

/** The first probe seed whose draw (of `points` only) satisfies `test`: the generator is deterministic, so this is a fixed deployment. */
function seedWhere(points: string, test: (draw: RandomDraw) => boolean): DialectName {
  for (let i = 0; i < 2_000; i++) {
    const name = `random:probe-${i}:only=${points}`;
    if (test(drawRandomDialect(name))) return name as DialectName;
  }
  throw new Error(`no probe seed draws that (${points})`);
}

describe('drawn spellings of the fields the client reads', () => {
  it('are never a name in the client\'s alias table (neither the whole spelling nor the key it puts at the top of the frame)', () => {
    const found: string[] = [];
    for (const seed of SEEDS) {
      const { spellings } = drawRandomDialect(`random:${seed}`).realtime;
      for (const [event, fields] of Object.entries(spellings)) {
        for (const [field, spelling] of Object.entries(fields)) {
          const top = spelling.split('.')[0]!;
          if (KNOWN.has(spelling) || KNOWN.has(top)) found.push(`${seed}: ${event}.${field} as ${spelling}`);
        }
      }
    }
    expect(found.slice(0, 20)).toEqual([]);
  });

  it('spell every field the client reads, the needed ones included (never our own name)', () => {
    const { spellings } = drawRandomDialect('random:spell-0').realtime;
    for (const [event, fields] of Object.entries({ input_ack: ['sequence'], audio: ['audio', 'segment_id', 'sequence'], segment_completed: ['segment_id'], ready: ['format'], finish: ['reason'], error: ['code'] })) {
      for (const field of fields) expect(spellings[event]?.[field], `${event}.${field}`).not.toBe(field);
    }
  });

  it('draw synonyms for the needed fields the client has by meaning, extension values and other number encodings', () => {
    const draws = SEEDS.map((s) => drawRandomDialect(`random:${s}`));
    expect(draws.some((d) => d.realtime.byMeaning.includes('input_ack.sequence'))).toBe(true);
    expect(draws.some((d) => d.realtime.byMeaning.includes('segment_completed.segment_id'))).toBe(true);
    expect(draws.some((d) => d.realtime.timestamps === 'ext')).toBe(true);
    expect(draws.some((d) => d.realtime.numbers === 'varied')).toBe(true);
    expect(draws.some((d) => d.http.pcmStatement === 'x-raw')).toBe(true);
    expect(draws.some((d) => d.http.wavContentType === UNKNOWN_AUDIO_LABEL)).toBe(true);
  });

  it('every drawn frame is read: the needed values found by name or by meaning, whatever the encoding', () => {
    const ack = { event: 'input_ack', event_id: 'e1', trace_id: 't', timestamp: 1_700_000_000_000, request_id: 'r', sequence: 3, characters: 12, buffered_characters: 0, remaining_capacity: 9_988 };
    const audio = { event: 'audio', event_id: 'e2', trace_id: 't', timestamp: 1_700_000_000_001, request_id: 'r', session_id: 's', segment_id: 'seg-1', sequence: 1, audio: new Uint8Array([1, 2, 3, 4]), format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16 };
    const completed = { event: 'segment_completed', event_id: 'e3', trace_id: 't', timestamp: 1_700_000_000_002, request_id: 'r', segment_id: 'seg-1', units: 2, audio_bytes: 4 };
    const ready = { event: 'ready', event_id: 'e0', trace_id: 't', timestamp: 1_700_000_000_000, mode: 'reliable', request_id: 'r', session_id: 's', provider: 'p', model: 'm', voice_id: 'v', format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16 };
    const finish = { event: 'finish', event_id: 'e4', trace_id: 't', timestamp: 1_700_000_000_003, request_id: 'r', session_id: 's', reason: 'completed', units: 2 };
    for (const seed of SEEDS.slice(0, 100)) {
      const name = `random:${seed}:off=frames,sequence,unknownEvents`;
      const dialect = dialectOf(name);
      const rewrite = dialect.realtime();
      const byMeaning = drawRandomDialect(name).realtime.byMeaning;
      const read = (event: Record<string, unknown>) => {
        const frames = rewrite(event);
        expect(frames).toHaveLength(1);
        const r = readServerFrame(dialect.encode(frames[0]!));
        expect(r.kind, `${seed}: ${JSON.stringify(r)}\n${describeDialect(name)}`).toBe('event');
        return r.kind === 'event' ? (r.event as Record<string, unknown>) : {};
      };
      const at = `\n${describeDialect(name)}`;
      expect(read(ready), at).toMatchObject({ format: 'pcm', sample_rate: 24_000, bit_depth: 16 });
      const gotAck = read(ack);
      if (byMeaning.includes('input_ack.sequence')) expect(gotAck['sequence'], at).toBeUndefined();
      else expect(gotAck['sequence'], at).toBe(3);
      const gotAudio = read(audio);
      expect({ ...gotAudio, audio: [...(gotAudio['audio'] as Uint8Array)] }, at).toMatchObject({ segment_id: 'seg-1', sequence: 1, audio: [1, 2, 3, 4], sample_rate: 24_000, bit_depth: 16 });
      expect(read(completed)['segment_id'], at).toBe(byMeaning.includes('segment_completed.segment_id') ? '' : 'seg-1');
      expect(read(finish), at).toMatchObject({ reason: 'completed' });
    }
  });
});

describe('say against a deployment that names needed fields its own way, puts extensions in fields and labels audio its own way', () => {
  const KEY = 'sk-test-drawn-spellings';
  const TEXT = 'A first sentence for the drawn deployment. A second one, a little longer, follows it.';
  let dir: string;
  const servers: Record<string, ReferenceServer> = {};

  /** Names no table knows for the acked sequence and the completed segment, timestamps as extensions, numbers in other encodings, unknown fields (extensions among them) on every event. */
  const byMeaning = seedWhere('spellings,timestamps,numbers,unknownFields', (d) =>
    d.realtime.byMeaning.includes('input_ack.sequence') && d.realtime.byMeaning.includes('segment_completed.segment_id') && d.realtime.timestamps === 'ext' && d.realtime.numbers === 'varied' && d.realtime.unknownFields === 1,
  );
  const reference = 'reference' as DialectName;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'voxpipe-spellings-'));
    for (const name of [reference, byMeaning]) servers[name] = await startServer({ engine: 'tone', dialect: name, accounts: [{ apiKey: KEY, userId: 'u1' }] });
  });
  afterAll(async () => {
    for (const s of Object.values(servers)) await s.close();
  });

  async function say(name: string, args: string[], file: string): Promise<{ code: number; err: string; data: Buffer }> {
    const out = join(dir, file);
    const io = fakeIo({ VOXPIPE_BASE_URL: servers[name]!.baseUrl, VOXPIPE_API_KEY: KEY });
    const code = await main(['say', TEXT, ...args, '--out', out], io);
    return { code, err: io.err(), data: code === 0 ? await readFile(out) : Buffer.alloc(0) };
  }

  it.each(['reliable', 'simple'])('realtime %s: the same audio as ours, one note for the fields read by meaning', async (mode) => {
    const args = ['--transport', 'realtime', '--mode', mode, '--format', 'pcm'];
    const ours = await say(reference, args, `ours-${mode}.pcm`);
    expect(ours.code, ours.err).toBe(0);
    const got = await say(byMeaning, args, `drawn-${mode}.pcm`);
    expect(got.code, `${got.err}\n${describeDialect(byMeaning)}`).toBe(0);
    expect(got.data.equals(ours.data), `${got.data.length} vs ${ours.data.length} bytes\n${describeDialect(byMeaning)}`).toBe(true);
    if (mode === 'reliable') expect(got.err.match(/warning server_field_not_found/g) ?? []).toHaveLength(2);
  });

  it.each([
    ['GStreamer caps', (d: RandomDraw) => d.http.pcmStatement === 'x-raw'],
    ['GStreamer caps, big-endian', (d: RandomDraw) => d.http.pcmStatement === 'x-raw-be'],
    ['RFC 2586 L16 (big-endian)', (d: RandomDraw) => d.http.pcmStatement === 'l16'],
    ['a label no client knows', (d: RandomDraw) => d.http.pcmStatement === 'unknown-label'],
  ])('say --format pcm over sync, compat and async with raw PCM labelled by %s: our bytes at the stated layout', async (_label, test) => {
    const name = seedWhere('contentTypes,rate', test);
    const server = await startServer({ engine: 'tone', dialect: name, accounts: [{ apiKey: KEY, userId: 'u1' }] });
    const ours = await startServer({ engine: 'tone', dialect: `${name.replace(/:only=.*/, '')}:only=rate` as DialectName, accounts: [{ apiKey: KEY, userId: 'u1' }] });
    servers[name] = server;
    servers[`${name}-ours`] = ours;
    const rate = dialectOf(name).sampleRate;
    for (const transport of ['sync', 'compat', 'async']) {
      const args = ['--transport', transport, '--format', 'pcm', '--json'];
      const expected = await say(`${name}-ours`, args, `${transport}-ours.pcm`);
      expect(expected.code, expected.err).toBe(0);
      const got = await say(name, args, `${transport}-drawn.pcm`);
      expect(got.code, `${transport}: ${got.err}\n${describeDialect(name)}`).toBe(0);
      expect(got.data.equals(expected.data), `${transport}: ${got.data.length} vs ${expected.data.length} bytes at ${rate} Hz\n${describeDialect(name)}`).toBe(true);
    }
  });
});
