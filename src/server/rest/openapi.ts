/**
 * Module: `GET {root_url}/api/openapi.json` (no key). An OpenAPI 3.1
 * document generated at request time from the router's table, with the same
 * zod schemas that validate requests (`z.toJSONSchema`, input side), so it
 * lists every non-hidden route of every module as it really behaves.
 */
import { z } from 'zod';
import type { ModuleFactory } from '../module.js';
import type { ServerContext } from '../context.js';
import { defineRoute, type RouteDef } from '../http/router.js';

/** Path of the schema route. */
export const OPENAPI_PATH = '/api/openapi.json';
/** OpenAPI version of the document. */
export const OPENAPI_VERSION = '3.1.0';

type JsonSchema = Record<string, unknown>;

interface Components {
  schemas: Record<string, JsonSchema>;
}

const ERROR_SCHEMA_REF = { $ref: '#/components/schemas/Error' };

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, requestId: { type: 'string' } },
      additionalProperties: true,
    },
  },
};

/**
 * JSON Schema of a zod schema for embedding in OpenAPI: no `$schema`, and
 * any `$defs` hoisted into `components.schemas` (refs rewritten).
 */
function toSchema(schema: z.ZodType, io: 'input' | 'output', components: Components): JsonSchema {
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  } catch {
    // A schema zod cannot express (e.g. a transform in a cycle): document it as "any".
    return {};
  }
  delete json['$schema'];
  const defs = json['$defs'] as Record<string, JsonSchema> | undefined;
  delete json['$defs'];
  const rewrite = (value: JsonSchema): JsonSchema => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
  if (defs) for (const [name, def] of Object.entries(defs)) components.schemas[name] ??= rewrite(def);
  return rewrite(json);
}

function operationId(method: string, path: string, taken: Set<string>): string {
  const base = `${method.toLowerCase()}${path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('')}`;
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
  taken.add(id);
  return id;
}

function isBinary(contentType: string): boolean {
  return !contentType.includes('json') && !contentType.startsWith('text/');
}

function operationOf(def: RouteDef<unknown, unknown>, components: Components, taken: Set<string>): JsonSchema {
  const parameters: JsonSchema[] = [];
  for (const m of def.path.matchAll(/\{(\w+)\}/g)) parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  if (def.query) {
    const q = toSchema(def.query, 'input', components);
    const props = (q['properties'] ?? {}) as Record<string, JsonSchema>;
    const required = (q['required'] ?? []) as string[];
    for (const [name, schema] of Object.entries(props)) {
      const { description, ...rest } = schema;
      parameters.push({ name, in: 'query', required: required.includes(name), ...(description === undefined ? {} : { description }), schema: rest });
    }
  }
  for (const h of def.headers ?? []) parameters.push({ name: h.name, in: 'header', required: h.required, description: h.description, schema: { type: 'string' } });

  const op: JsonSchema = { operationId: operationId(def.method, def.path, taken), summary: def.summary };
  if (def.tags?.length) op['tags'] = def.tags;
  if (parameters.length) op['parameters'] = parameters;
  if (def.body) {
    const content: Record<string, unknown> = { 'application/json': { schema: toSchema(def.body, 'input', components) } };
    if (def.multipart) content['multipart/form-data'] = { schema: { type: 'object' } };
    op['requestBody'] = { required: true, content };
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, doc] of Object.entries(def.responses ?? { 200: { description: 'OK' } })) {
    const contentType = doc.contentType ?? 'application/json';
    const response: JsonSchema = { description: doc.description };
    if (status !== '204' && !status.startsWith('3')) {
      const schema = doc.schema ? toSchema(doc.schema, 'output', components) : isBinary(contentType) ? { type: 'string', contentMediaType: contentType } : {};
      response['content'] = { [contentType]: { schema } };
    }
    responses[status] = response;
  }
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_SCHEMA_REF } } });
  if (def.auth !== false) responses['401'] ??= errorResponse('API key missing, malformed, invalid, revoked, or sent in the URL');
  if (def.body || def.query) responses['400'] ??= errorResponse('Invalid request');
  if (def.capability) responses['403'] ??= errorResponse(`No access to ${def.capability}`);
  responses['500'] ??= errorResponse('Server error');
  op['responses'] = responses;
  op['security'] = def.auth === false ? [] : [{ bearerAuth: [] }];
  return op;
}

/** The OpenAPI document of `routes` (hidden routes left out) served at `rootUrl`. */
export function buildOpenApiDocument(routes: readonly RouteDef<unknown, unknown>[], rootUrl: string): JsonSchema {
  const components: Components = { schemas: { Error: ERROR_SCHEMA } };
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const taken = new Set<string>();
  for (const def of routes) {
    if (def.hidden) continue;
    const item = (paths[def.path] ??= {});
    const method = def.method.toLowerCase();
    if (item[method]) continue; // the router answers with the first route of a method and path
    item[method] = operationOf(def, components, taken);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'voxpipe reference server',
      version: '1.0.0',
      description: 'Local reference implementation of the audio generation service. REST under /api/open/v1, compatible routes and downloads at the root.',
    },
    servers: [{ url: rootUrl || '/' }],
    paths,
    components: { ...components, securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' } } },
    security: [{ bearerAuth: [] }],
  };
}

export const createOpenApiModule: ModuleFactory = (ctx: ServerContext, router) => ({
  routes: [
    defineRoute({
      method: 'GET',
      path: OPENAPI_PATH,
      summary: 'This OpenAPI document',
      tags: ['meta'],
      auth: false,
      responses: { 200: { description: 'OpenAPI 3.1 document' } },
      handler: () => ({ json: buildOpenApiDocument(router.routes, ctx.urls.rootUrl) }),
    }),
  ] as never[],
});
