/**
 * Hostile HTTP on every REST route of the reference server,
 * seeded with fast-check (VOXPIPE_FUZZ_SEED replays): random JSON and
 * non-JSON bodies, wrong types, huge and malformed path parameters and query
 * strings. Property: never a 500; every error is a 4xx with a JSON error body
 * naming a code; the server keeps serving.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type ReferenceServer } from '../../src/server/index.js';

const SEED = Number(process.env['VOXPIPE_FUZZ_SEED'] ?? 424_242);
const PER_ROUTE = Number(process.env['VOXPIPE_REST_FUZZ_PER_ROUTE'] ?? 100);
const KEY = 'sk-rest-fuzz';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'rf', credits: 1e12, apiQuota: 1e12 }] });
});
afterAll(() => server.close());

const pathParam = fc.oneof(
  fc.string({ maxLength: 40 }).map((s) => encodeURIComponent(s) || 'x'),
  fc.constantFrom('%', '%E0%A4%A', '%zz', '..', '%2e%2e', 'a'.repeat(2_000), '__proto__', 'constructor', '0', '-1'),
);
const body = fc.oneof(
  fc.anything({ maxDepth: 3 }).map((v) => ({ type: 'application/json', data: JSON.stringify(v) ?? 'null' })),
  fc.dictionary(fc.constantFrom('text', 'voiceId', 'voice_id', 'model', 'modelId', 'format', 'speed', 'audioUrl', 'prompt', 'name', 'webhookUrl', 'origin', 'candidateId', 'durationSeconds'), fc.anything({ maxDepth: 2 }), { maxKeys: 5 }).map((v) => ({ type: 'application/json', data: JSON.stringify(v) })),
  fc.string({ maxLength: 300 }).map((s) => ({ type: 'application/json', data: s })),
  fc.uint8Array({ maxLength: 300 }).map((b) => ({ type: 'application/octet-stream', data: Buffer.from(b) })),
  fc.constant({ type: 'multipart/form-data; boundary=x', data: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--' }),
);
const query = fc.dictionary(fc.constantFrom('limit', 'offset', 'page', 'pageSize', 'status', 'createdAfter', 'format', 'download', 'type', 'model'), fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String)), { maxKeys: 4 });

it(`every REST route under ${PER_ROUTE} hostile requests each (seed ${SEED}): no 500, 4xx errors with a JSON code`, { timeout: 300_000 }, async () => {
  const routes = server.router.routes.filter((r) => r.path.startsWith('/'));
  const bad: string[] = [];
  let requests = 0;
  const statuses = new Map<number, number>();
  for (const [i, route] of routes.entries()) {
    const samples = fc.sample(fc.tuple(fc.array(pathParam, { minLength: 3, maxLength: 3 }), body, query, fc.boolean()), { numRuns: PER_ROUTE, seed: SEED + i });
    for (const [params, b, q, withIdempotencyKey] of samples) {
      let n = 0;
      const path = route.path.replace(/\{[^}]+\}/g, () => params[n++ % params.length]!);
      const url = new URL(`${server.rootUrl}${path}`);
      for (const [k, v] of Object.entries(q)) url.searchParams.set(k, v);
      const headers: Record<string, string> = { authorization: `Bearer ${KEY}`, 'content-type': b.type };
      if (withIdempotencyKey) headers['idempotency-key'] = `k-${requests}`;
      const init: RequestInit = { method: route.method, headers, redirect: 'manual' };
      if (route.method !== 'GET' && route.method !== 'DELETE') init.body = b.data;
      const res = await fetch(url, init);
      requests++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const text = await res.text();
      if (res.status >= 500 && res.status !== 503) bad.push(`${route.method} ${url.pathname.slice(0, 120)}: ${res.status} ${text.slice(0, 120)}`);
      else if (res.status >= 400 && res.status !== 404) {
        let code: unknown;
        try {
          const json = JSON.parse(text) as { error?: { code?: unknown }; code?: unknown };
          code = json.error?.code ?? json.code;
        } catch {
          code = undefined;
        }
        if (typeof code !== 'string' || code === '') bad.push(`${route.method} ${url.pathname.slice(0, 120)}: ${res.status} without a JSON error code`);
      }
    }
  }
  console.log(`REST fuzz seed ${SEED}: ${requests} requests over ${routes.length} routes; statuses ${[...statuses].sort((a, b) => a[0] - b[0]).map(([s, c]) => `${s} x${c}`).join(', ')}`);
  expect(bad.slice(0, 20)).toEqual([]);
  // Still serving.
  expect((await fetch(`${server.baseUrl}/profile`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
});
