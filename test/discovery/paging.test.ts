/**
 * Discovery tolerant to the end. Deployments that page
 * their voice list in ways our server does not (a next link, a cursor, a
 * Link header, ...) and answer the capabilities route with something the
 * client cannot use, played by small fixture services on port 0; the
 * realtime speech itself comes from the reference server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { ServiceConfig } from '../../src/config.js';
import { defaultVoice, DiscoveryWarning, fetchCapabilities, listVoices } from '../../src/discovery.js';
import { AuthenticationError } from '../../src/errors.js';
import { createClient } from '../../src/http/index.js';
import { PUBLIC_VOICES } from '../../src/server/catalog.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { DEFAULT_MODEL } from '../../src/protocol/constants.js';
import { fakeIo } from '../helpers/fake-io.js';

const KEY = 'sk-local-dev';

type Reply = { status?: number; body?: unknown; raw?: string; type?: string; headers?: Record<string, string> };
type Route = (url: URL, origin: string) => Reply | undefined;

async function fixture(route: Route): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  let origin = '';
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    paths.push(`${url.pathname}${url.search}`);
    if (req.headers.authorization !== `Bearer ${KEY}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'unauthorized', message: 'bad key' }));
      return;
    }
    const r = route(url, origin) ?? { status: 404, body: { code: 'not_found', message: 'no route' } };
    res.writeHead(r.status ?? 200, { 'content-type': r.type ?? 'application/json', ...r.headers }).end(r.raw ?? JSON.stringify(r.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: origin, paths, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

const configAt = (url: string, more: Partial<ServiceConfig> = {}): ServiceConfig => ({ apiKey: KEY, baseUrl: `${url}/api/open/v1`, rootUrl: url, wsUrl: url.replace('http', 'ws'), rtHttpUrl: url, ...more });

/**
 * Eight voices; only the last page's (a real public voice of the reference
 * server) speaks the default model, so a client that reads one page picks a
 * voice that cannot speak it.
 */
const SPEAKER = PUBLIC_VOICES[2]!.voiceId;
const VOICES = [
  ...Array.from({ length: 7 }, (_, i) => ({ voiceId: `other-${i + 1}`, type: 'public', models: ['another-model'] })),
  { voiceId: SPEAKER, type: 'public', models: [DEFAULT_MODEL] },
];
const SIZE = 3;
const VOICES_PATH = '/api/open/v1/voices';

/** Paging styles our server does not use (it pages by offset/limit or page/pageSize, and both are here too). */
const STYLES: Record<string, Route> = {
  'a relative next link': (url) => {
    const at = Number(url.searchParams.get('from') ?? 0);
    return { body: { voices: VOICES.slice(at, at + SIZE), next: at + SIZE < VOICES.length ? `voices?from=${at + SIZE}` : null } };
  },
  'an absolute next link under links': (url, origin) => {
    const at = Number(url.searchParams.get('skip') ?? 0);
    return { body: { data: VOICES.slice(at, at + SIZE), links: { next: at + SIZE < VOICES.length ? `${origin}${VOICES_PATH}?skip=${at + SIZE}` : null } } };
  },
  'a cursor (next_cursor)': (url) => {
    const at = url.searchParams.has('cursor') ? Number(Buffer.from(url.searchParams.get('cursor')!, 'base64url').toString()) : 0;
    const next = at + SIZE < VOICES.length ? Buffer.from(String(at + SIZE)).toString('base64url') : null;
    return { body: { items: VOICES.slice(at, at + SIZE), next_cursor: next } };
  },
  'a Link header on a bare array': (url, origin) => {
    const at = Number(url.searchParams.get('start') ?? 0);
    const headers: Record<string, string> = at + SIZE < VOICES.length ? { link: `<${origin}${VOICES_PATH}?start=${at + SIZE}>; rel="next", <${origin}${VOICES_PATH}>; rel="first"` } : {};
    return { body: VOICES.slice(at, at + SIZE), headers };
  },
  'page numbers with a page size of its own': (url) => {
    const page = Number(url.searchParams.get('page') ?? 1);
    return { body: { data: VOICES.slice((page - 1) * SIZE, page * SIZE), pagination: { page, per_page: SIZE, total_pages: Math.ceil(VOICES.length / SIZE) } } };
  },
  'offsets with hasMore': (url) => {
    const at = Number(url.searchParams.get('offset') ?? 0);
    return { body: { voices: VOICES.slice(at, at + SIZE), offset: at, limit: SIZE, hasMore: at + SIZE < VOICES.length } };
  },
  'has_more alone (after the last id)': (url) => {
    const after = url.searchParams.get('starting_after');
    const at = after === null ? 0 : VOICES.findIndex((v) => v.voiceId === after) + 1;
    return { body: { object: 'list', data: VOICES.slice(at, at + SIZE), has_more: at + SIZE < VOICES.length } };
  },
};

const voicesOnly = (style: Route): Route => (url, origin) => (url.pathname === VOICES_PATH ? style(url, origin) : undefined);

describe('voice lists are read to the end, however the deployment pages them', () => {
  for (const [name, style] of Object.entries(STYLES)) {
    it(`${name}: every voice, once, in order; the default voice comes from the last page`, async () => {
      const f = await fixture(voicesOnly(style));
      try {
        expect((await listVoices(configAt(f.url))).map((v) => v.voiceId)).toEqual(VOICES.map((v) => v.voiceId));
        expect(f.paths.filter((p) => p.startsWith(VOICES_PATH))).toHaveLength(Math.ceil(VOICES.length / SIZE));
        expect(await defaultVoice(configAt(f.url), DEFAULT_MODEL)).toBe(SPEAKER);
        const client = createClient({ apiKey: KEY, baseUrl: `${f.url}/api/open/v1` });
        expect((await client.voices.list()).map((v) => v.voiceId)).toEqual(VOICES.map((v) => v.voiceId));
      } finally {
        await f.close();
      }
    });
  }

  it('a next link back to a page already read, or a deployment that ignores paging, ends the walk', async () => {
    const f = await fixture(voicesOnly(() => ({ body: { voices: VOICES.slice(0, SIZE), next: `${VOICES_PATH}?limit=100`, hasMore: true } })));
    try {
      expect((await listVoices(configAt(f.url))).map((v) => v.voiceId)).toEqual(VOICES.slice(0, SIZE).map((v) => v.voiceId));
      expect(f.paths.length).toBeLessThanOrEqual(2);
    } finally {
      await f.close();
    }
  });

  it('a next link to another host is followed without the key', async () => {
    const seen: (string | undefined)[] = [];
    const foreign = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ voices: VOICES.slice(SIZE), next: null }));
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    const elsewhere = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/cdn/voices-2.json`;
    const f = await fixture(voicesOnly(() => ({ body: { voices: VOICES.slice(0, SIZE), next: elsewhere } })));
    try {
      expect((await listVoices(configAt(f.url))).map((v) => v.voiceId)).toEqual(VOICES.map((v) => v.voiceId));
      expect(seen).toEqual([undefined]);
    } finally {
      await f.close();
      foreign.closeAllConnections();
      await new Promise<void>((resolve) => foreign.close(() => resolve()));
    }
  });

  it('a list without end stops at the page bound with a voice_list_truncated warning', async () => {
    let n = 0;
    const f = await fixture(voicesOnly(() => ({ body: { voices: [{ voiceId: `endless-${n++}`, type: 'public' }], next_cursor: `c${n}` } })));
    try {
      const warnings: { code: string; message: string }[] = [];
      const voices = await listVoices(configAt(f.url), { maxVoicePages: 7, onWarning: (w) => warnings.push(w) });
      expect(voices).toHaveLength(7);
      expect(f.paths).toHaveLength(7);
      expect(warnings.map((w) => w.code)).toEqual([DiscoveryWarning.voiceListTruncated]);
      const client = createClient({ apiKey: KEY, baseUrl: `${f.url}/api/open/v1` });
      expect(await client.voices.listPages({ maxPages: 3 })).toMatchObject({ complete: false, pages: 3 });
    } finally {
      await f.close();
    }
  });
});

/** Capabilities documents no client could use. */
const UNUSABLE: Record<string, Reply> = {
  'an HTML page with 200': { type: 'text/html', raw: '<!doctype html><html><body><h1>Welcome</h1></body></html>' },
  'HTML sent as JSON': { raw: '<html><body>Login required</body></html>' },
  'a JSON array': { body: ['svc-s21pro-flash'] },
  'a document that names nothing': { body: { status: 'ok' } },
  'a 403': { status: 403, body: { code: 'forbidden', message: 'not for this plan' } },
  'a 500 with an HTML body': { status: 500, type: 'text/html', raw: '<html>\n<body>\n<h1>500</h1>\n</body>\n</html>' },
  'a 400': { status: 400, body: { code: 'invalid_request', message: 'version header missing' } },
};

describe('a capabilities document the client cannot use is treated as absent, with one warning', () => {
  for (const [name, reply] of Object.entries(UNUSABLE)) {
    it(name, async () => {
      const f = await fixture((url) => (url.pathname === '/v2/tts/capabilities' ? reply : undefined));
      try {
        const warnings: { code: string; message: string }[] = [];
        expect(await fetchCapabilities(configAt(f.url), { onWarning: (w) => warnings.push(w) })).toBeUndefined();
        expect(warnings.map((w) => w.code)).toEqual([DiscoveryWarning.capabilitiesUnusable]);
        expect(warnings[0]!.message).not.toMatch(/\n/);
      } finally {
        await f.close();
      }
    });
  }

  it('absent (404) is no warning; a wrong key is still unauthorized', async () => {
    const f = await fixture(() => undefined);
    try {
      const warnings: unknown[] = [];
      expect(await fetchCapabilities(configAt(f.url), { onWarning: (w) => warnings.push(w) })).toBeUndefined();
      expect(warnings).toEqual([]);
      await expect(fetchCapabilities({ ...configAt(f.url), apiKey: 'sk-not-the-right-key-1234' })).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      await f.close();
    }
  });
});

describe('the CLI against such a deployment', () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startServer({ engine: 'tone' });
  });
  afterAll(() => server.close());

  it('voices lists every page (next link); say without --voice takes the voice of the last page that speaks the model, after one warning about the HTML capabilities', async () => {
    // The REST routes and capabilities are the fixture's; realtime speech is the reference server's.
    const f = await fixture((url, origin) => {
      if (url.pathname === '/v2/tts/capabilities') return UNUSABLE['an HTML page with 200'];
      return voicesOnly(STYLES['a relative next link']!)(url, origin);
    });
    const env = { VOXPIPE_API_KEY: KEY, VOXPIPE_BASE_URL: `${f.url}/api/open/v1`, VOXPIPE_ROOT_URL: f.url, VOXPIPE_RT_HTTP_URL: f.url, VOXPIPE_WS_URL: server.wsUrl };
    try {
      const listed = fakeIo(env);
      expect(await main(['voices', '--json'], listed)).toBe(0);
      expect((JSON.parse(listed.out()) as { items: { voiceId: string }[] }).items.map((v) => v.voiceId)).toEqual(VOICES.map((v) => v.voiceId));

      const said = fakeIo(env);
      expect(await main(['say', 'Which voice speaks this?', '--out', '-', '--format', 'pcm', '--transport', 'realtime'], said), said.err()).toBe(0);
      expect(said.outBytes().length).toBeGreaterThan(0);
      expect(said.err().match(/warning capabilities_unusable/g)).toHaveLength(1);
      expect(said.err()).not.toMatch(/invalid_response|voice_not_found/);
    } finally {
      await f.close();
    }
  });
});
