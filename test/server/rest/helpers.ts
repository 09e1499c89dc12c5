/** Helpers of the REST tests: a reference server on port 0 and small fetch wrappers. */
import { MPEGDecoder } from 'mpg123-decoder';
import { DEV_API_KEY, startServer, type ReferenceServer } from '../../../src/server/index.js';
import type { AccountSeed } from '../../../src/server/app.js';

export { DEV_API_KEY };

/** First public voice (supports every model). */
export const VOICE = '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a01';
/** A public voice whose models are svc-s21pro-flash and lyra-v2 (lyra has no mp3). */
export const VOICE_LYRA = '6f1c2a9e-3b1d-4c5e-9a7f-0d2b8e4c1a04';
export const MODEL = 'svc-s21pro-flash';

/** Start a tone-engine server. */
export function startTestServer(): Promise<ReferenceServer> {
  return startServer({ engine: 'tone', port: 0 });
}

let seq = 0;
/** A fresh account on `server` (unique key and user id), 1,000,000 credits unless set. */
export function newAccount(server: ReferenceServer, seed: Partial<AccountSeed> = {}): { key: string; userId: string } {
  seq++;
  const key = seed.apiKey ?? `sk-test-${process.pid}-${seq}-${Math.random().toString(36).slice(2)}`;
  const userId = seed.userId ?? `user-${seq}-${Math.random().toString(36).slice(2, 8)}`;
  server.addAccount({ credits: 1_000_000, ...seed, apiKey: key, userId });
  return { key, userId };
}

/** Current credits of an account. */
export function creditsOf(server: ReferenceServer, userId: string): number {
  return server.ctx.store.accounts.get(userId)!.credits;
}

export interface CallOptions {
  key?: string | null;
  headers?: Record<string, string>;
  redirect?: RequestRedirect;
}

/** JSON POST to `url` with a Bearer key (null: no Authorization header). */
export function post(url: string, body: unknown, options: CallOptions = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(options.key), ...options.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    redirect: options.redirect ?? 'follow',
  });
}

/** GET `url` with a Bearer key (null: none). */
export function get(url: string, options: CallOptions = {}): Promise<Response> {
  return fetch(url, { headers: { ...auth(options.key), ...options.headers }, redirect: options.redirect ?? 'follow' });
}

function auth(key: string | null | undefined): Record<string, string> {
  if (key === null) return {};
  return { authorization: `Bearer ${key ?? DEV_API_KEY}` };
}

/** The error object of a JSON error response. */
export async function errorOf(res: Response): Promise<{ code: string; message: string; requestId: string; [k: string]: unknown }> {
  const body = (await res.json()) as { error: { code: string; message: string; requestId: string } };
  return body.error;
}

/** Decode an mp3 file completely; returns decoded samples, sample rate and errors. */
export async function decodeMp3(bytes: Uint8Array): Promise<{ samples: number; sampleRate: number; errors: number }> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const out = decoder.decode(bytes);
    return { samples: out.samplesDecoded, sampleRate: out.sampleRate, errors: out.errors.length };
  } finally {
    decoder.free();
  }
}

/** Poll `read` until `done` holds (a bounded number of tries, a short pause between). */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, tries = 400, pauseMs = 10): Promise<T> {
  let value = await read();
  for (let i = 0; i < tries && !done(value); i++) {
    await new Promise((r) => setTimeout(r, pauseMs));
    value = await read();
  }
  return value;
}
