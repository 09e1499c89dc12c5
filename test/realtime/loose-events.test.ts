/**
 * Server events in the shapes another deployment may send where
 * spec 6 names a field loosely, an unknown event, extra fields. A proxy in
 * front of the real reference server rewrites its frames; the client must
 * finish the request byte-exact, with a `warning` where it skipped data it
 * does not need, and fail over (not close with `invalid_message`) only on a
 * frame it truly cannot use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceConfig } from '../../src/config.js';
import type { ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { API_KEY, run, SEGMENTS, session, startTestServer } from './fixtures.js';
import { rename, setField, startRewritingProxy, without, type Rewrite, type ServerMap } from './rewriting-proxy.js';

let server: ReferenceServer;
let baseline: Buffer;

beforeAll(async () => {
  // The rewrites start from our own server's shapes.
  server = await startTestServer('reference');
  baseline = (await run(session(server))).audio;
});
afterAll(() => server.close());

/** Run a session expected to fail; its error (every promise of it handled). */
async function failureOf(s: ReturnType<typeof session>): Promise<unknown> {
  try {
    await s.open();
    for (const seg of SEGMENTS) s.send(seg).catch(() => undefined);
    await s.end();
    return undefined;
  } catch (err) {
    return err;
  }
}

/** Several rewrites applied in turn. */
const all =
  (...rewrites: Rewrite[]): Rewrite =>
  (m) =>
    rewrites.reduce<ServerMap[]>((maps, r) => maps.flatMap(r), [m]);

/** `audio.sequence` counted per segment instead of per connection. */
function perSegmentSequence(): Rewrite {
  const counts = new Map<string, number>();
  return (m) => {
    if (m['event'] !== 'audio') return [m];
    const id = String(m['segment_id']);
    const n = (counts.get(id) ?? 0) + 1;
    counts.set(id, n);
    return [{ ...m, sequence: n }];
  };
}

/** Audio frames of each segment delivered in pairs, the second first. */
function swappedPairs(): Rewrite {
  let held: ServerMap | undefined;
  return (m) => {
    if (m['event'] !== 'audio') {
      const out = held ? [held, m] : [m];
      held = undefined;
      return out;
    }
    if (!held) {
      held = m;
      return [];
    }
    const out = [m, held];
    held = undefined;
    return out;
  };
}

interface Row {
  name: string;
  rewrite: () => Rewrite;
  /** Warning codes the client reports. */
  warnings: string[];
}

const rows: Row[] = [
  { name: 'authenticated.quota as an object', rewrite: () => setField('authenticated', 'quota', { remaining: 1000, unit: 'credits' }), warnings: [] },
  { name: 'authenticated without quota', rewrite: () => without('authenticated', 'quota'), warnings: [] },
  { name: 'no trace_id on any event', rewrite: () => without('*', 'trace_id'), warnings: [] },
  {
    name: 'input_ack with other names',
    rewrite: () =>
      all(
        rename('input_ack', 'sequence', 'accepted_sequence'),
        rename('input_ack', 'characters', 'accepted_characters'),
        rename('input_ack', 'buffered_characters', 'buffered'),
        rename('input_ack', 'remaining_capacity', 'capacity'),
      ),
    warnings: [],
  },
  { name: 'input_ack sequence as seq', rewrite: () => rename('input_ack', 'sequence', 'seq'), warnings: [] },
  {
    name: 'segment_accepted with other names',
    rewrite: () => all(rename('segment_accepted', 'characters', 'segment_characters'), rename('segment_accepted', 'reserved_units', 'reserved_billing_units')),
    warnings: [],
  },
  { name: 'segment_accepted without segment_id (not needed)', rewrite: () => without('segment_accepted', 'segment_id'), warnings: ['ignored_server_event'] },
  { name: 'segment_completed with segment_units', rewrite: () => rename('segment_completed', 'units', 'segment_units'), warnings: [] },
  { name: 'segment_completed without audio_bytes', rewrite: () => without('segment_completed', 'audio_bytes'), warnings: [] },
  { name: 'usage without segment_id (not needed)', rewrite: () => without('usage', 'segment_id'), warnings: ['ignored_server_event'] },
  { name: 'ready.format outside our list', rewrite: () => setField('ready', 'format', 'pcm_s16le'), warnings: [] },
  { name: 'ready without the session and provider fields', rewrite: () => all(without('ready', 'session_id'), without('ready', 'provider')), warnings: [] },
  { name: 'extra fields on every event', rewrite: () => (m) => [{ ...m, server_region: 'alt-1', x_debug: { a: [1, 2] } }], warnings: [] },
  {
    name: 'an unknown event after every segment (one warning, not one per event)',
    rewrite: () => (m) => (m['event'] === 'segment_completed' ? [m, { event: 'server_stats', event_id: 'x', timestamp: 1, queue_depth: 0 }] : [m]),
    warnings: ['ignored_server_event'],
  },
  { name: 'audio sequence counted per segment', rewrite: perSegmentSequence, warnings: [] },
  { name: 'audio frames out of order (reordered by sequence)', rewrite: swappedPairs, warnings: [] },
];

describe('loosely specified server events (spec 6)', () => {
  it.each(rows)('$name: completes byte-exact', async ({ rewrite, warnings }) => {
    const proxy = await startRewritingProxy(server.wsUrl, rewrite());
    try {
      const result = await run(session(server, { wsUrl: proxy.wsUrl }));
      expect(result.events.retry).toBe(0);
      expect(result.events.allWarnings).toEqual(warnings);
      expect(result.audio.length).toBe(baseline.length);
      expect(result.audio.equals(baseline)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('an audio frame with no segment_id is unusable: invalid_server_frame, and auto fails over to HTTP with nothing lost', async () => {
    const proxy = await startRewritingProxy(server.wsUrl, without('audio', 'segment_id'));
    try {
      const failed = await failureOf(session(server, { wsUrl: proxy.wsUrl }));
      expect(failed).toMatchObject({ code: 'invalid_server_frame' });

      const config: ServiceConfig = { ...serviceConfigOf(server, API_KEY), wsUrl: proxy.wsUrl };
      const speech = await createSpeechStream(config, { format: 'pcm', transport: 'auto' });
      const failovers: string[] = [];
      speech.on('failover', (f) => failovers.push(`${f.from}->${f.to}:${f.error.code}`));
      speech.end('A frame the client cannot use. The rest goes over HTTP.');
      let bytes = 0;
      for await (const c of speech) bytes += (c as Buffer).length;
      expect(failovers).toEqual(['realtime->sync:invalid_server_frame']);
      expect(bytes).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('an error event with an empty code reads as server_error and keeps what the server sent', async () => {
    server.faults.set({ realtimeError: { afterAudioFrames: 2, code: 'provider_unavailable', retryable: false } });
    const proxy = await startRewritingProxy(server.wsUrl, setField('error', 'code', ''));
    try {
      const failed = await failureOf(session(server, { wsUrl: proxy.wsUrl }));
      expect(failed).toMatchObject({ code: 'server_error', details: { rawCode: '' } });
    } finally {
      server.faults.clear();
      await proxy.close();
    }
  });
});
