import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceServer } from '../../../src/server/index.js';
import { get, startTestServer } from './helpers.js';

let server: ReferenceServer;
let doc: Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

beforeAll(async () => {
  server = await startTestServer();
  const res = await get(`${server.rootUrl}/api/openapi.json`, { key: null });
  expect(res.status).toBe(200);
  doc = (await res.json()) as typeof doc;
});
afterAll(async () => {
  await server.close();
});

describe('GET /api/openapi.json', () => {
  it('is served without a key and passes an OpenAPI 3 validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toMatch(/^3\./);
  });

  it('lists every non-hidden route of the router, and no hidden one', () => {
    const listed = new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    const visible = new Set(server.router.routes.filter((r) => !r.hidden).map((r) => `${r.method} ${r.path}`));
    expect(listed).toEqual(visible);
    expect(listed).toContain('POST /api/open/v1/speech/tts');
    expect(listed).toContain('POST /v1/audio/speech');
    expect(listed).toContain('GET /api/open/tts/jobs/{taskId}/audio');
    expect(listed).not.toContain('POST /api/open/tts');
    expect(listed).not.toContain('POST /v1/speech/tts');
  });

  it('documents request bodies and query parameters from the validating schemas, and bearer security', () => {
    const sync = doc.paths['/api/open/v1/speech/tts']!['post']!;
    const body = (sync['requestBody'] as { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>>; required: string[] } }> }).content['application/json']!.schema;
    expect(body.required).toContain('text');
    expect(body.properties['text']).toMatchObject({ type: 'string', minLength: 1, maxLength: 5000 });
    expect(body.properties['speed']).toMatchObject({ minimum: 0.5, maximum: 2 });
    expect(body.properties['emotion']!['enum']).toContain('neutral');
    expect(sync['security']).toEqual([{ bearerAuth: [] }]);
    const list = doc.paths['/api/open/v1/speech/tts/jobs']!['get']!;
    const limit = (list['parameters'] as { name: string; in: string; schema: Record<string, unknown> }[]).find((p) => p.name === 'limit')!;
    expect(limit).toMatchObject({ in: 'query', schema: { minimum: 1, maximum: 100, default: 20 } });
    const job = doc.paths['/api/open/v1/speech/tts/jobs/{taskId}']!['get']!;
    expect(job['parameters']).toContainEqual({ name: 'taskId', in: 'path', required: true, schema: { type: 'string' } });
    expect(doc.paths['/api/openapi.json']!['get']!['security']).toEqual([]);
    expect((doc['components'] as { securitySchemes: unknown }).securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
  });
});
