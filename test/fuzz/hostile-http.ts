/**
 * Rounds of hostile HTTP against the reference server: on every route, a
 * request the server answers before its body is complete (a body over the
 * limit, no key, an unknown key, a key in the URL, a malformed path
 * parameter, a wrong method, an unknown path, a malformed header, a refused
 * WebSocket upgrade), sent by a client that keeps writing 3 MiB whatever it
 * hears, over keep-alive and `Connection: close`, with a length or chunked.
 * Drawn with fast-check from a seed, so a failure replays.
 */
import fc from 'fast-check';
import { REALTIME_PATHS, SUBPROTOCOL } from '../../src/protocol/constants.js';
import type { ReferenceServer } from '../../src/server/index.js';
import { sendEarly, type EarlyOutcome, type EarlyRequest } from './early-client.js';

/** Body bytes of every hostile request: three times the JSON limit. */
export const HOSTILE_BODY_BYTES = 3 * 1024 * 1024;

/** What the server should answer, and why. */
export interface HostileCase {
  name: string;
  request: EarlyRequest;
  /** The status the client must read (one of them). */
  status: number | readonly number[];
  /**
   * Answered on the raw connection (the HTTP parser gave up, or an upgrade
   * was refused): the server half-closes at once and reads the rest into
   * nothing, so only a half-open client writes all of its body.
   */
  raw: boolean;
}

/** One request's outcome against its case. */
export interface HostileResult {
  name: string;
  expected: number | readonly number[];
  raw: boolean;
  halfOpen: boolean;
  outcome: EarlyOutcome;
}

const KINDS = ['tooLarge', 'noKey', 'unknownKey', 'keyInUrl', 'badParam', 'wrongMethod', 'unknownPath'] as const;
type Kind = (typeof KINDS)[number];

/** A path of `route` with its parameters filled in (`bad`: a malformed percent-encoding in the first). */
function pathOf(route: string, bad: boolean): string {
  let first = true;
  return route.replace(/\{\w+\}/g, () => {
    const value = bad && first ? '%E0%A4%A' : 'x1';
    first = false;
    return value;
  });
}

/**
 * The cases of one round: every POST route gets a body over its limit, no
 * key and an unknown key; every route one more drawn kind (GET routes with
 * a body too); then an upload read whole and refused, a malformed header and
 * a refused upgrade. Keep-alive or close, length or chunked, half-open or
 * not, the write size and the pause between writes are drawn.
 */
export function hostileCases(server: ReferenceServer, key: string, seed: number): HostileCase[] {
  const routes = server.router.routes.filter((r) => r.path.startsWith('/'));
  const shape = fc.record({ close: fc.boolean(), chunked: fc.boolean(), halfOpen: fc.boolean(), chunkBytes: fc.constantFrom(16 * 1024, 64 * 1024, 256 * 1024), pauseMs: fc.constantFrom(0, 0, 1, 4) });
  const draws = fc.sample(fc.tuple(shape, fc.constantFrom(...KINDS)), { numRuns: routes.length * 4 + 2, seed });
  let drawn = 0;
  const cases: HostileCase[] = [];
  const add = (name: string, status: HostileCase['status'], request: Omit<EarlyRequest, 'bodyBytes' | 'close' | 'chunked' | 'chunkBytes'>, raw = false) => {
    const [s] = draws[drawn++ % draws.length]!;
    const how = `${s.close ? 'close' : 'keep-alive'}, ${s.chunked ? 'chunked' : 'length'}, ${s.chunkBytes / 1024} KiB writes ${s.pauseMs} ms apart${s.halfOpen ? ', half-open' : ''}`;
    cases.push({ name: `${name} (${how})`, status, raw, request: { ...request, ...s, bodyBytes: HOSTILE_BODY_BYTES } });
  };
  const json = { 'Content-Type': 'application/json' };
  const auth = { ...json, Authorization: `Bearer ${key}` };
  const kindCase = (kind: Kind, method: string, path: string, query = false) => {
    const hasParam = path.includes('{');
    switch (kind) {
      case 'tooLarge':
        // A route's query is checked before its body: without one it may be refused first (400).
        return add(`${method} ${path}: body over the limit`, query ? [413, 400] : 413, { method, target: pathOf(path, false), headers: auth });
      case 'noKey':
        return add(`${method} ${path}: no key`, 401, { method, target: pathOf(path, false), headers: json });
      case 'unknownKey':
        return add(`${method} ${path}: unknown key`, 401, { method, target: pathOf(path, false), headers: { ...json, Authorization: 'Bearer sk-nobody-0123456789' } });
      case 'keyInUrl':
        return add(`${method} ${path}: key in the URL`, 401, { method, target: `${pathOf(path, false)}?api_key=not-sent-here`, headers: json });
      case 'badParam':
        if (!hasParam) return kindCase('unknownPath', method, path);
        return add(`${method} ${path}: malformed path parameter`, 400, { method, target: pathOf(path, true), headers: auth });
      case 'wrongMethod':
        return add(`PATCH ${path}: wrong method`, 405, { method: 'PATCH', target: pathOf(path, false), headers: auth });
      case 'unknownPath':
        return add(`${method} /nope${path}: unknown path`, 404, { method, target: `/nope${pathOf(path, false)}`, headers: auth });
    }
  };
  for (const [i, route] of routes.entries()) {
    const authed = route.auth !== false;
    if (route.method === 'POST') {
      kindCase(authed || !route.query ? 'tooLarge' : 'wrongMethod', route.method, route.path, route.query !== undefined);
      if (authed) {
        kindCase('noKey', route.method, route.path);
        kindCase('unknownKey', route.method, route.path);
      }
    }
    const [, drawnKind] = draws[(routes.length * 3 + i) % draws.length]!;
    // A route without a key answers the key kinds with its own reply, and checks its query before the body.
    kindCase(authed || !['noKey', 'unknownKey', 'keyInUrl', 'tooLarge'].includes(drawnKind) ? drawnKind : 'wrongMethod', route.method, route.path, route.query !== undefined);
  }
  // Not early: an upload the route reads whole, then refuses; its body must not outlive the answer.
  add('POST /api/open/v1/voices: a multipart upload that is not multipart', 400, { method: 'POST', target: '/api/open/v1/voices', headers: { ...auth, 'Content-Type': 'multipart/form-data; boundary=x' } });
  add('POST with a malformed header', 400, { method: 'POST', target: '/api/open/v1/speech/tts', headers: { ...auth, 'X-Bad\u0001Header': 'x' } }, true);
  add(`GET ${REALTIME_PATHS.live}: upgrade with an unknown key`, 401, {
    method: 'GET',
    target: REALTIME_PATHS.live,
    headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Protocol': SUBPROTOCOL, Authorization: 'Bearer sk-nobody-0123456789' },
  }, true);
  return cases;
}

/** Bytes of each upload of `uploadBurst`: 20 MiB, under the upload limit. */
export const BURST_UPLOAD_BYTES = 20 * 1024 * 1024;

/**
 * `count` uploads at once to the one route that takes multipart, each read
 * whole before it is refused (not multipart inside): what the server holds
 * of them at once is bounded, so those past its bound are refused early
 * (429) instead of held.
 */
export function uploadBurst(key: string, count: number): HostileCase[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `POST /api/open/v1/voices: upload ${i + 1} of ${count} at once`,
    status: [400, 429],
    raw: false,
    request: { method: 'POST', target: '/api/open/v1/voices', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'multipart/form-data; boundary=x' }, bodyBytes: BURST_UPLOAD_BYTES, chunked: false, close: i % 2 === 0, chunkBytes: 256 * 1024 },
  }));
}

/** Run `cases`, `parallel` at a time (a client that opens connections in parallel); resolves with every outcome. */
export async function runCases(server: ReferenceServer, cases: HostileCase[], parallel = 2): Promise<HostileResult[]> {
  const results: HostileResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      results.push({ name: c.name, expected: c.status, raw: c.raw, halfOpen: c.request.halfOpen === true, outcome: await sendEarly(server.port, c.request) });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return results;
}

/** The results a client would call failures: no whole response, another status, or a write that failed. */
export function failures(results: HostileResult[]): string[] {
  return results
    .filter((r) => !r.outcome.answered || ![r.expected].flat().includes(r.outcome.status) || r.outcome.error !== undefined || (!r.outcome.wroteAll && (!r.raw || r.halfOpen)))
    .map((r) => `${r.name}: ${r.outcome.answered ? `read ${r.outcome.status}` : `no whole response (status ${r.outcome.status})`}, expected ${[r.expected].flat().join(' or ')}; ${r.outcome.error ?? 'no error'} after ${r.outcome.sent} bytes`);
}
