/**
 * The reference server's dialects (src/server/dialect.ts): each
 * open point of the spec taken the documented way, checked on the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeMap, encodeFrame } from '../../src/protocol/codec.js';
import { REALTIME_PATHS, SUBPROTOCOL } from '../../src/protocol/constants.js';
import { PUBLIC_VOICES } from '../../src/server/catalog.js';
import { DIALECTS, startServer, type DialectName, type ReferenceServer } from '../../src/server/index.js';

const KEY = 'sk-dialect-test';
const auth = { authorization: `Bearer ${KEY}` };
const servers = new Map<DialectName, ReferenceServer>();

beforeAll(async () => {
  for (const dialect of DIALECTS) servers.set(dialect, await startServer({ engine: 'tone', dialect, accounts: [{ apiKey: KEY, userId: 'd' }] }));
});
afterAll(async () => {
  for (const s of servers.values()) await s.close();
});
const server = (d: DialectName) => servers.get(d)!;

/** One reliable request of two segments; every frame the server sent, decoded without any schema. */
async function reliableFrames(s: ReferenceServer): Promise<Record<string, unknown>[]> {
  const ws = new WebSocket(`${s.wsUrl}${REALTIME_PATHS.live}`, SUBPROTOCOL, { headers: auth });
  const frames: Record<string, unknown>[] = [];
  let n = 0;
  const send = (event: Record<string, unknown>) => ws.send(encodeFrame({ event_id: `c${++n}`, ...event }));
  await new Promise<void>((resolve, reject) => {
    ws.on('error', reject);
    ws.on('close', () => resolve());
    ws.on('message', (data: Buffer) => {
      const f = decodeMap(data);
      frames.push(f);
      const name = f['event'];
      if (name === 'authenticated') send({ event: 'start', mode: 'reliable', request_id: `r-${Date.now()}`, request: { voice_id: PUBLIC_VOICES[0]!.voiceId, model: 'svc-s21pro-flash', format: 'pcm' } });
      else if (name === 'ready') send({ event: 'text', sequence: 1, text: 'First part.' });
      else if (name === 'input_ack') {
        const seq = (f['sequence'] ?? f['accepted_sequence']) as number;
        send({ event: 'flush', segment_id: `s${seq}` });
      } else if (name === 'segment_completed') {
        const done = frames.filter((x) => x['event'] === 'segment_completed').length;
        if (done === 1) send({ event: 'text', sequence: 2, text: 'Second part.' });
        else send({ event: 'stop' });
      }
    });
  });
  return frames;
}

describe('realtime events', () => {
  it('reference: trace_id everywhere, our names, audio sequence per connection', async () => {
    const frames = await reliableFrames(server('reference'));
    expect(frames.every((f) => typeof f['trace_id'] === 'string')).toBe(true);
    expect(frames.find((f) => f['event'] === 'input_ack')).toHaveProperty('sequence');
    const seqs = frames.filter((f) => f['event'] === 'audio').map((f) => f['sequence']);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(frames.some((f) => f['event'] === 'server_stats')).toBe(false);
  });

  it('alt: no trace_id, other names, quota object, per-segment sequence, an extra event kind', async () => {
    const frames = await reliableFrames(server('alt'));
    expect(frames.some((f) => 'trace_id' in f)).toBe(false);
    expect(frames.every((f) => f['server_region'] === 'alt-1')).toBe(true);
    expect(frames.find((f) => f['event'] === 'authenticated')!['quota']).toMatchObject({ remaining: expect.any(Number), unit: 'credits' });
    expect(Object.keys(frames.find((f) => f['event'] === 'input_ack')!)).toEqual(expect.arrayContaining(['accepted_sequence', 'accepted_characters', 'buffered', 'capacity']));
    expect(frames.find((f) => f['event'] === 'segment_accepted')).toMatchObject({ segment_characters: expect.any(Number), reserved_billing_units: expect.any(Number) });
    expect(frames.find((f) => f['event'] === 'segment_completed')).toHaveProperty('segment_units');
    for (const segment of ['s1', 's2']) {
      const seqs = frames.filter((f) => f['event'] === 'audio' && f['segment_id'] === segment).map((f) => f['sequence']);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
    expect(frames.filter((f) => f['event'] === 'server_stats')).toHaveLength(2);
  });

  it('minimal: no trace_id, otherwise our names', async () => {
    const frames = await reliableFrames(server('minimal'));
    expect(frames.some((f) => 'trace_id' in f)).toBe(false);
    expect(frames.find((f) => f['event'] === 'input_ack')).toHaveProperty('sequence');
  });
});

describe('HTTP shapes', () => {
  it('capabilities: providers (reference), top-level models with a default voice (alt), absent (minimal)', async () => {
    const get = (d: DialectName) => fetch(`${server(d).rtHttpUrl}${REALTIME_PATHS.capabilities}`, { headers: auth });
    expect(await (await get('reference')).json()).toHaveProperty('providers');
    const alt = (await (await get('alt')).json()) as { models: { id: string; default_voice_id: string }[]; providers?: unknown };
    expect(alt.providers).toBeUndefined();
    expect(alt.models.find((m) => m.id === 'svc-s21pro-flash')?.default_voice_id).toBe(PUBLIC_VOICES[0]!.voiceId);
    expect((await get('minimal')).status).toBe(404);
  });

  it('errors: wrapped (reference), flat (alt, minimal)', async () => {
    const body = async (d: DialectName) => (await fetch(`${server(d).baseUrl}/speech/tts/jobs/nope`, { headers: auth })).json();
    expect(await body('reference')).toMatchObject({ error: { code: 'not_found', requestId: expect.any(String) } });
    for (const d of ['alt', 'minimal'] as const) expect(await body(d)).toMatchObject({ code: 'not_found', message: expect.any(String), requestId: expect.any(String) });
  });

  it('voices: offset pagination (reference), page/pageSize with type (alt)', async () => {
    const ref = (await (await fetch(`${server('reference').baseUrl}/voices?limit=2`, { headers: auth })).json()) as { pagination: { hasMore: boolean } };
    expect(ref.pagination.hasMore).toBe(true);
    const alt = (await (await fetch(`${server('alt').baseUrl}/voices?page=2&pageSize=2`, { headers: auth })).json()) as { data: { type: string }[]; page: number; pageSize: number; total: number };
    expect(alt).toMatchObject({ page: 2, pageSize: 2, total: PUBLIC_VOICES.length });
    expect(alt.data.every((v) => v.type === 'public')).toBe(true);
  });

  it('async TTS at /speech/tts/jobs: envelope, flat, minimal', async () => {
    const create = async (d: DialectName) =>
      (await fetch(`${server(d).baseUrl}/speech/tts/jobs`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Shape test.', voiceId: PUBLIC_VOICES[0]!.voiceId }) })).json();
    expect(await create('reference')).toHaveProperty('task');
    expect(await create('alt')).toMatchObject({ taskId: expect.any(String), status: expect.any(String), creditsCharged: expect.any(Number) });
    expect(await create('minimal')).toEqual({ id: expect.any(String), status: 'queued' });
  });

  it('browser ticket: ticket (reference), ticket_token (alt)', async () => {
    const ticket = async (d: DialectName) =>
      (await fetch(`${server(d).rtHttpUrl}${REALTIME_PATHS.browserTickets}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ origin: 'https://app.example' }) })).json();
    expect(await ticket('reference')).toHaveProperty('ticket');
    expect(await ticket('alt')).toHaveProperty('ticket_token');
  });
});

it('an unknown dialect is refused before anything starts, naming the dialects', async () => {
  await expect(startServer({ engine: 'tone', dialect: 'klingon' as DialectName })).rejects.toThrow(/reference, alt, minimal/);
});
