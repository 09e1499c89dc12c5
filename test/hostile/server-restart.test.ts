/**
 * A server restart mid-request: the process generating a
 * reliable request dies (its sockets dropped, no close frame, no state
 * written after that instant) and a new one starts on the same port.
 * - On the store the old process left (a snapshot taken at the instant it
 *   died): the request reads `failed_retryable`, the client resumes with
 *   `retry_failed`, the audio is byte-identical to a run without the crash,
 *   and no segment is charged twice.
 * - On an empty store (nothing persisted): the status route does not know the
 *   request; the client starts it again and completes byte-exact, or ends
 *   with a typed error; it never hangs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VoxpipeError } from '../../src/errors.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { MemoryStore } from '../../src/server/store/memory.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';
import { speakText } from '../helpers/speak.js';

const KEY = 'sk-restart-test';
const ACCOUNTS = [{ apiKey: KEY, userId: 'restart' }];
const TEXT = 'The first sentence is spoken before the crash. The second one is cut in the middle. The third comes after the restart.';
const servers: ReferenceServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function reference(): Promise<Buffer> {
  const server = await startServer({ engine: 'tone', accounts: ACCOUNTS });
  servers.push(server);
  return (await speakText(serviceConfigOf(server, KEY), TEXT, { format: 'pcm', transport: 'realtime' })).audio;
}

/** Speak TEXT on `first`; once the first segment completed and the next has begun, crash it and start the second server. */
async function speakAcrossCrash(first: ReferenceServer, startSecond: (snapshot: MemoryStore) => Promise<ReferenceServer>): Promise<{ audio: Buffer; error: unknown; second: ReferenceServer; requestId: string; segments: number; resumed: number }> {
  first.faults.set({ latencyMs: 15 }); // slow enough to crash mid-segment
  const speech = await createSpeechStream(serviceConfigOf(first, KEY), { format: 'pcm', transport: 'realtime', realtime: { backoff: { baseMs: 50, maxMs: 300 } } });
  const parts: Buffer[] = [];
  let completed = 0;
  let crash: Promise<ReferenceServer> | undefined;
  speech.on('segment', () => (completed += 1));
  speech.on('data', (c: Buffer) => {
    parts.push(c);
    if (completed >= 1 && !crash) {
      // The instant of death: what a persistent store holds now is all the next process gets.
      const snapshot = (first.ctx.store as MemoryStore).snapshot();
      crash = first.close().then(() => startSecond(snapshot));
    }
  });
  speech.end(TEXT);
  const error = await new Promise<unknown>((resolve) => {
    speech.on('end', () => resolve(undefined));
    speech.on('error', resolve);
  });
  if (!crash) throw new Error('the request ended before the crash point');
  const second = await crash;
  servers.push(second);
  const summary = speech.summary();
  return { audio: Buffer.concat(parts), error, second, requestId: summary.requestId, segments: summary.segments.length, resumed: summary.resumed };
}

function charges(server: ReferenceServer, requestId: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of server.ctx.ledger.entriesOf('restart')) {
    const prefix = `rt:restart:${requestId}:`;
    if (!e.refId.startsWith(prefix) || e.state === 'released') continue;
    const segment = e.refId.slice(prefix.length);
    counts.set(segment, (counts.get(segment) ?? 0) + 1);
  }
  return counts;
}

describe('a server restart mid-request', () => {
  it('on the store the dead process left: resumes, byte-exact, each segment charged once', async () => {
    const expected = await reference();
    const store = new MemoryStore();
    const first = await startServer({ engine: 'tone', accounts: ACCOUNTS, store });
    const port = first.port;
    const { audio, error, second, requestId, segments, resumed } = await speakAcrossCrash(first, (snapshot) => startServer({ engine: 'tone', accounts: ACCOUNTS, store: snapshot, port }));
    expect(error).toBeUndefined();
    expect(audio.equals(expected)).toBe(true);
    expect(resumed).toBeGreaterThanOrEqual(1);
    const counts = charges(second, requestId);
    expect(segments).toBeGreaterThanOrEqual(2);
    expect(counts.size).toBe(segments);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);

  it('on an empty store: the request starts again, byte-exact or a typed error, never a hang', async () => {
    const expected = await reference();
    const first = await startServer({ engine: 'tone', accounts: ACCOUNTS });
    const port = first.port;
    const { audio, error } = await speakAcrossCrash(first, () => startServer({ engine: 'tone', accounts: ACCOUNTS, port }));
    if (error === undefined) expect(audio.equals(expected)).toBe(true);
    else expect(error).toBeInstanceOf(VoxpipeError);
  }, 60_000);
});
