/**
 * The SpeechStream of one bench run, on exactly the transport the case names
 * (no failover: a failing transport must show up as errors, not as figures
 * of another transport). Built as `createTransport` builds them, plus the one
 * thing a cold HTTP run needs: every request on a new TCP connection.
 */
import { randomUUID } from 'node:crypto';
import type { ServiceConfig } from '../config.js';
import { createClient } from '../http/index.js';
import { ReliableSession } from '../realtime/reliable/session.js';
import { SimpleSession } from '../realtime/simple-session.js';
import { SpeechStream } from '../stream/speech-stream.js';
import type { SegmentTransport } from '../transport.js';
import { createHttpTransport } from '../stream/transports/http-transports.js';
import { BenchTransport, Variant, type BenchCase } from './cases.js';

/** A `fetch` that asks for `Connection: close`, so no request reuses a pooled connection (cold HTTP runs). */
export const closingFetch: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('connection', 'close');
  return fetch(input, { ...init, headers });
};

/** Whether the case's transport is HTTP (no connection of its own to open). */
export function isHttpTransport(transport: BenchTransport): boolean {
  return transport === BenchTransport.sync || transport === BenchTransport.compat || transport === BenchTransport.async;
}

function buildTransport(config: ServiceConfig, c: BenchCase, signal: AbortSignal | undefined): SegmentTransport {
  const requestId = randomUUID();
  if (c.transport === BenchTransport.realtimeReliable || c.transport === BenchTransport.realtimeSimple) {
    const base = {
      wsUrl: config.wsUrl,
      apiKey: config.apiKey,
      request: { voice_id: c.voiceId, model: c.model, format: c.format },
      requestId,
      ...(signal && { signal }),
    };
    if (c.transport === BenchTransport.realtimeSimple) return new SimpleSession(base);
    return new ReliableSession({ ...base, rtHttpUrl: config.rtHttpUrl });
  }
  const client = createClient({
    apiKey: config.apiKey,
    baseUrl: config.baseUrl,
    rootUrl: config.rootUrl,
    ...(c.variant === Variant.cold && { fetch: closingFetch }),
  });
  return createHttpTransport(c.transport, { client, voiceId: c.voiceId, model: c.model, format: c.format, requestId });
}

/** A new SpeechStream for one run of `c` (not opened). */
export function createBenchStream(config: ServiceConfig, c: BenchCase, signal?: AbortSignal): SpeechStream {
  return new SpeechStream({ transport: buildTransport(config, c, signal), ...(signal && { signal }) });
}

/**
 * Make sure a keep-alive connection to the HTTP route's origin is open and
 * idle (warm HTTP runs), with one cheap authenticated GET. Its answer does
 * not matter; any status leaves the connection in the pool.
 */
export async function warmHttpConnection(config: ServiceConfig, c: BenchCase, signal?: AbortSignal): Promise<void> {
  const url = c.transport === BenchTransport.compat ? `${config.rootUrl}/v1/audio/voices` : `${config.baseUrl}/voices`;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${config.apiKey}` }, ...(signal && { signal }) });
    await res.arrayBuffer();
  } catch {
    // A failed warm-up only makes the run colder; the run itself reports real errors.
  }
}
