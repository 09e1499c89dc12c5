/**
 * Capabilities and voice discovery against deployments that lay
 * their answers out differently (a small fixture service on port 0 plays the
 * other deployment; the reference server plays ours).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceConfig } from '../../src/config.js';
import { defaultVoice, fetchCapabilities, listVoices, voiceKind } from '../../src/discovery.js';
import { AuthenticationError, ConnectionError } from '../../src/errors.js';
import { PUBLIC_VOICES } from '../../src/server/catalog.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { serviceConfigOf } from '../../src/service.js';
import { createSpeechStream } from '../../src/speech.js';

type Handler = (req: IncomingMessage, url: URL) => { status: number; body?: unknown } | undefined;

/** A fixture deployment: answers what `handler` knows, 404 otherwise. Records the paths asked. */
async function fixture(handler: Handler, key: string | null = 'sk-fixture'): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    paths.push(`${url.pathname}${url.search}`);
    if (key !== null && req.headers.authorization !== `Bearer ${key}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'unauthorized', message: 'bad key' }));
      return;
    }
    const answer = handler(req, url) ?? { status: 404, body: { code: 'not_found', message: 'no route' } };
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, paths, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const configAt = (url: string, overrides: Partial<ServiceConfig> = {}): ServiceConfig => ({
  apiKey: 'sk-fixture',
  baseUrl: `${url}/api/open/v1`,
  rootUrl: url,
  wsUrl: url.replace('http', 'ws'),
  rtHttpUrl: url,
  ...overrides,
});

/** The other shape: models at the top level with a default voice each, no voice lists. */
const ALT_CAPS = {
  site: 'alt',
  models: [
    { id: 'alt-fast', provider: 'x', default: true, default_voice_id: 'voice-alt-1', formats: ['pcm', 'mp3'] },
    { id: 'alt-hd', provider: 'y', default: false, default_voice_id: 'voice-alt-2', formats: ['wav'] },
  ],
  pcm: { sample_rate: 22_050, channels: 1, bit_depth: 16 },
};

/** `GET /voices` in page/pageSize pages of two. */
const VOICES = [
  { voiceId: 'mine-1', type: 'personal', defaultEngineModelId: 'alt-fast' },
  { voiceId: 'voice-x', type: 'public', defaultEngineModelId: 'alt-hd' },
  { voiceId: 'voice-y', type: 'public', defaultEngineModelId: 'alt-fast' },
];
function pagedVoices(url: URL): { status: number; body: unknown } {
  const page = Number(url.searchParams.get('page') ?? 1);
  const size = 2;
  return { status: 200, body: { data: VOICES.slice((page - 1) * size, page * size), page, pageSize: size, total: VOICES.length } };
}

let server: ReferenceServer;
beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
});

/** The reference layout of the capabilities document, whatever dialect the suite runs under. */
async function withReference<T>(run: (s: ReferenceServer) => Promise<T>): Promise<T> {
  const reference = await startServer({ engine: 'tone', dialect: 'reference' });
  try {
    return await run(reference);
  } finally {
    await reference.close();
  }
}
afterAll(() => server.close());

describe('capabilities in any shape', () => {
  it('ours: models under providers, with voice lists', async () => {
    await withReference(async (reference) => {
      const caps = await fetchCapabilities(serviceConfigOf(reference));
      expect(caps?.defaultModel).toBe('svc-s21pro-flash');
      expect(caps?.models.find((m) => m.id === 'svc-s21pro-flash')?.voiceIds[0]).toBe(PUBLIC_VOICES[0]!.voiceId);
      expect(await defaultVoice(serviceConfigOf(reference), 'svc-s21pro-flash')).toBe(PUBLIC_VOICES[0]!.voiceId);
    });
  });

  it('whatever dialect this suite runs under, the default voice is a public voice of the default model', async () => {
    expect(PUBLIC_VOICES.map((v) => v.voiceId)).toContain(await defaultVoice(serviceConfigOf(server), 'svc-s21pro-flash'));
  });

  it("the other shape: top-level models, each model's default voice", async () => {
    const f = await fixture((_req, url) => (url.pathname === '/v2/tts/capabilities' ? { status: 200, body: ALT_CAPS } : undefined));
    try {
      const caps = await fetchCapabilities(configAt(f.url));
      expect(caps).toMatchObject({ defaultModel: 'alt-fast', pcm: { sampleRate: 22_050, channels: 1, bitDepth: 16 } });
      expect(await defaultVoice(configAt(f.url), 'alt-hd', undefined, caps)).toBe('voice-alt-2');
    } finally {
      await f.close();
    }
  });

  it('absent (404): no capabilities, and a voice still comes from GET /voices, across pages, public and fitting the model', async () => {
    const f = await fixture((_req, url) => (url.pathname === '/api/open/v1/voices' ? pagedVoices(url) : undefined));
    try {
      expect(await fetchCapabilities(configAt(f.url))).toBeUndefined();
      expect(await defaultVoice(configAt(f.url), 'alt-fast')).toBe('voice-y');
      expect(f.paths.filter((p) => p.startsWith('/api/open/v1/voices'))).toHaveLength(2);
      expect((await listVoices(configAt(f.url))).map((v) => `${v.voiceId}:${v.type}`)).toEqual(['mine-1:personal', 'voice-x:public', 'voice-y:public']);
    } finally {
      await f.close();
    }
  });

  it('only the compatible voice list: its first id of the public form (a UUID), never another', async () => {
    const uuid = '0b7e6f4a-2c1d-4e3f-8a9b-1c2d3e4f5a6b';
    const f = await fixture((_req, url) => (url.pathname === '/v1/audio/voices' ? { status: 200, body: { voices: [{ id: 'my-clone' }, { id: uuid }] } } : undefined));
    try {
      expect(await defaultVoice(configAt(f.url), 'any-model')).toBe(uuid);
    } finally {
      await f.close();
    }
  });

  describe('public voices by any marker the client knows, else by the spec\'s rule (public voice ids are UUIDs)', () => {
    const PUBLIC_A = '1a2b3c4d-0000-4000-8000-00000000000a';
    const PUBLIC_B = '1a2b3c4d-0000-4000-8000-00000000000b';
    const voicesAt = (items: unknown[]) => fixture((_req, url) => (url.pathname === '/api/open/v1/voices' ? { status: 200, body: { data: items } } : undefined));

    it('a marker the client does not know: the personal voice listed first (not a UUID) is never the default', async () => {
      const f = await voicesAt([
        { voiceId: 'my-cloned-voice', tier: 'workspace', models: ['m1'] },
        { voiceId: PUBLIC_A, tier: 'catalogue', models: ['m1'] },
      ]);
      try {
        expect(await defaultVoice(configAt(f.url), 'm1')).toBe(PUBLIC_A);
        expect((await listVoices(configAt(f.url))).map((v) => v.type)).toEqual(['personal', 'public']);
      } finally {
        await f.close();
      }
    });

    it.each([
      ['visibility', { visibility: 'private' }, { visibility: 'public' }],
      ['is_custom', { is_custom: true }, { is_custom: false }],
      ['scope', { scope: 'account' }, { scope: 'global' }],
    ])('a known marker (%s) wins over the id form', async (_name, personal, pub) => {
      const f = await voicesAt([
        { voiceId: PUBLIC_A, ...personal, models: ['m1'] },
        { voiceId: 'stock-voice', ...pub, models: ['m1'] },
      ]);
      try {
        expect(await defaultVoice(configAt(f.url), 'm1')).toBe('stock-voice');
      } finally {
        await f.close();
      }
    });

    it('only among voices known to support the model: a public voice of another model is not taken', async () => {
      const f = await voicesAt([
        { voiceId: PUBLIC_A, models: ['other'] },
        { voiceId: PUBLIC_B, models: ['m1'] },
      ]);
      try {
        expect(await defaultVoice(configAt(f.url), 'm1')).toBe(PUBLIC_B);
        await expect(defaultVoice(configAt(f.url), 'm2')).rejects.toMatchObject({ code: 'voice_not_found' });
      } finally {
        await f.close();
      }
    });
  });

  it('nothing names a voice: voice_not_found naming the model', async () => {
    const f = await fixture(() => undefined);
    try {
      await expect(defaultVoice(configAt(f.url), 'lonely-model')).rejects.toMatchObject({ code: 'voice_not_found', message: expect.stringContaining('lonely-model') });
    } finally {
      await f.close();
    }
  });
});

describe('discovery errors', () => {
  it('a wrong key is unauthorized (AuthenticationError), not voice_not_found', async () => {
    const config = serviceConfigOf(server, 'sk-this-key-is-wrong-000');
    // Wherever the deployment first checks the key (a discovery read, or the realtime handshake).
    const error = await (async () => {
      const speech = await createSpeechStream(config, { format: 'pcm' });
      speech.end('Hello.');
      for await (const _ of speech) void _;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(JSON.stringify({ ...(error as object), m: (error as Error).message })).not.toContain('sk-this-key-is-wrong-000');
  });

  it('a closed port is a ConnectionError naming the host and port', async () => {
    const f = await fixture(() => undefined);
    await f.close();
    const port = new URL(f.url).port;
    const error = await createSpeechStream(configAt(f.url), { format: 'pcm' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it('an aborted signal is an AbortError, whatever the transport', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(createSpeechStream(serviceConfigOf(server), { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError', code: 'aborted' });
  });
});

describe('public or personal, from the voice type', () => {
  /** The reference server for everything but the capabilities route, which this deployment lacks. */
  async function withoutCapabilities<T>(run: (config: ServiceConfig) => Promise<T>): Promise<T> {
    const f = await fixture(() => undefined, null);
    try {
      return await run({ ...serviceConfigOf(server), rtHttpUrl: f.url });
    } finally {
      await f.close();
    }
  }

  async function speak(config: ServiceConfig, voiceId: string) {
    const speech = await createSpeechStream(config, { format: 'pcm', transport: 'auto', voiceId });
    speech.end('Which way does this go?');
    let bytes = 0;
    for await (const c of speech) bytes += (c as Buffer).length;
    return { bytes, summary: speech.summary() };
  }

  it('a public voice listed only in GET /voices (type public) goes realtime', async () => {
    const voice = PUBLIC_VOICES[1]!.voiceId;
    await withoutCapabilities(async (config) => {
      expect(await voiceKind(config, voice, undefined)).toBe('public');
      const { bytes, summary } = await speak(config, voice);
      expect(bytes).toBeGreaterThan(0);
      expect(summary.transport).toBe('realtime');
    });
  });

  it('a personal voice (type personal) goes over sync HTTP from the start', async () => {
    server.ctx.store.collection('voices').set('voice_personal_d', { voiceId: 'voice_personal_d', userId: 'local-dev', name: 'Mine', basePitchHz: 150, espeakVoice: 'en-us' });
    await withoutCapabilities(async (config) => {
      expect(await voiceKind(config, 'voice_personal_d', undefined)).toBe('personal');
      const { summary } = await speak(config, 'voice_personal_d');
      expect(summary.transport).toBe('sync');
    });
  });
});
