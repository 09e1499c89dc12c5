/**
 * Shared set-up of the realtime service tests: a reference server on port 0
 * with the deterministic `tone` engine and two accounts, and helpers that
 * walk the protocol a step at a time over the raw test client.
 */
import { startServer, type ReferenceServer, type ServerOptions } from '../../../src/server/index.js';
import { DEFAULT_MODEL, REALTIME_PATHS } from '../../../src/protocol/constants.js';
import { splitByChars, LIMITS } from '../../../src/protocol/limits.js';
import type { ServerEventOf } from '../../../src/protocol/events.js';
import { findModel, PUBLIC_VOICES } from '../../../src/server/catalog.js';
import { ToneEngine } from '../../../src/server/engines/tone.js';
import { RealtimeTestClient } from '../../helpers/realtime-client.js';

export const KEY_A = 'sk-test-realtime-alice';
export const KEY_B = 'sk-test-realtime-bob';
export const USER_A = 'alice';
export const USER_B = 'bob';
export const VOICE_ID = PUBLIC_VOICES[0]!.voiceId;
/** A valid `start.request` (default model, first voice, pcm). */
export const REQUEST = { voice_id: VOICE_ID, model: DEFAULT_MODEL, format: 'pcm' } as const;

/** Start a server with the tone engine and accounts alice (quota `quotaA`) and bob. */
export function startTestServer(options: ServerOptions & { quotaA?: number } = {}): Promise<ReferenceServer> {
  const { quotaA, ...rest } = options;
  return startServer({
    engine: 'tone',
    accounts: [
      { apiKey: KEY_A, userId: USER_A, apiQuota: quotaA ?? 1_000_000 },
      { apiKey: KEY_B, userId: USER_B, apiQuota: 1_000_000 },
    ],
    ...rest,
  });
}

/** Open a Bearer-authenticated connection and wait for `authenticated`. */
export async function openClient(server: ReferenceServer, apiKey = KEY_A): Promise<RealtimeTestClient> {
  const client = await RealtimeTestClient.connect(server.wsUrl, { apiKey });
  await client.next('authenticated');
  return client;
}

/** Send a reliable `start` and wait for `ready`. */
export async function startReliable(client: RealtimeTestClient, requestId: string, extra: Record<string, unknown> = {}): Promise<ServerEventOf<'ready'>> {
  client.send({ event: 'start', mode: 'reliable', event_id: client.id('start'), request_id: requestId, request: REQUEST, ...extra });
  return client.next('ready');
}

const sequences = new WeakMap<RealtimeTestClient, number>();

/** Send `text` as reliable `text` frames (next sequences), each awaited for its `input_ack`. */
export async function sendText(client: RealtimeTestClient, text: string): Promise<void> {
  for (const piece of splitByChars(text, LIMITS.textFrameMaxChars)) {
    const sequence = (sequences.get(client) ?? 0) + 1;
    sequences.set(client, sequence);
    const eventId = client.id('text');
    client.send({ event: 'text', event_id: eventId, sequence, text: piece });
    await client.next('input_ack', (a) => a.in_reply_to === eventId);
  }
}

/** The sequence the next `text` frame of this client will carry. */
export function nextSequence(client: RealtimeTestClient): number {
  return (sequences.get(client) ?? 0) + 1;
}

/** Mark `n` sequences as used (after frames the test sent by hand). */
export function useSequence(client: RealtimeTestClient): number {
  const sequence = nextSequence(client);
  sequences.set(client, sequence);
  return sequence;
}

/** Send `flush` for `segmentId`; returns the flush's event_id. */
export function flush(client: RealtimeTestClient, segmentId: string): string {
  const eventId = client.id('flush');
  client.send({ event: 'flush', event_id: eventId, segment_id: segmentId });
  return eventId;
}

/** Text, flush, and wait for `segment_completed`. */
export async function speakSegment(client: RealtimeTestClient, segmentId: string, text: string): Promise<ServerEventOf<'segment_completed'>> {
  await sendText(client, text);
  flush(client, segmentId);
  return client.next('segment_completed', (e) => e.segment_id === segmentId);
}

/** Send `stop` and wait for `finish`. */
export async function stop(client: RealtimeTestClient): Promise<ServerEventOf<'finish'>> {
  client.send({ event: 'stop', event_id: client.id('stop') });
  return client.next('finish');
}

/** GET a realtime HTTP route with a Bearer key. */
export async function getJson(server: ReferenceServer, path: string, apiKey: string | undefined = KEY_A): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.rtHttpUrl}${path}`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** `GET /v2/tts/requests/{id}` as `apiKey`. */
export function requestStatus(server: ReferenceServer, requestId: string, apiKey = KEY_A) {
  return getJson(server, `${REALTIME_PATHS.requests}/${encodeURIComponent(requestId)}`, apiKey);
}

/** The account's remaining API quota. */
export function quotaOf(server: ReferenceServer, userId = USER_A): number {
  return server.ctx.store.accounts.get(userId)!.apiQuota;
}

/** Close every client and the server. */
export async function cleanUp(server: ReferenceServer | undefined, clients: RealtimeTestClient[]): Promise<void> {
  for (const c of clients.splice(0)) c.ws.terminate();
  await server?.close();
}

/** What the tone engine makes of `text` for the default voice and model, straight from the engine. */
export async function toneAudio(text: string): Promise<Buffer> {
  const voice = PUBLIC_VOICES.find((v) => v.voiceId === VOICE_ID)!;
  const chunks: Buffer[] = [];
  for await (const c of new ToneEngine().synthesize(text, { voice: { basePitchHz: voice.basePitchHz, rate: findModel(DEFAULT_MODEL)!.rate, espeakVoice: voice.espeakVoice } })) chunks.push(c);
  return Buffer.concat(chunks);
}
