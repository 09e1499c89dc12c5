/**
 * A deployment behind a path prefix works end to end. The
 * reference server on port 0 sits behind a proxy that serves it only under
 * `/some/prefix` (HTTP and WebSocket upgrade; 404 outside it), and the
 * client is configured with `http://127.0.0.1:PORT/some/prefix` alone: every
 * URL (REST, realtime, status route, discovery) is derived from that by
 * `config.ts`, and nothing may go around the prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv, type ServiceConfig } from '../../src/config.js';
import { listVoices } from '../../src/discovery.js';
import { createClient } from '../../src/http/index.js';
import { fetchRequestStatus } from '../../src/realtime/status-client.js';
import { startServer, type ReferenceServer } from '../../src/server/index.js';
import { speakText } from '../helpers/speak.js';
import { startPrefixProxy, type PrefixProxy } from '../helpers/prefix-proxy.js';

const KEY = 'sk-test-path-prefix-0123456789';
const PREFIX = '/some/prefix';
let server: ReferenceServer;
let proxy: PrefixProxy;
let config: ServiceConfig;

beforeAll(async () => {
  server = await startServer({ engine: 'tone', accounts: [{ apiKey: KEY, userId: 'u1' }] });
  proxy = await startPrefixProxy(server.rootUrl, PREFIX);
  config = configFromEnv({ VOXPIPE_BASE_URL: proxy.url, VOXPIPE_API_KEY: KEY })!;
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});

describe('a deployment behind a path prefix', () => {
  it('every URL keeps the prefix', () => {
    const origin = proxy.url.slice(0, -PREFIX.length);
    expect(config).toMatchObject({
      baseUrl: `${origin}${PREFIX}/api/open/v1`,
      rootUrl: `${origin}${PREFIX}`,
      rtHttpUrl: `${origin}${PREFIX}`,
      wsUrl: `${origin.replace('http:', 'ws:')}${PREFIX}`,
    });
  });

  it('a realtime reliable say, then its request on the status route', async () => {
    const upgrades = proxy.counts.upgrades;
    const { audio, summary } = await speakText(config, 'Hello from behind a path prefix. A second sentence.', { transport: 'realtime', mode: 'reliable', format: 'pcm' });
    expect(summary.transport).toBe('realtime');
    expect(summary.failovers).toBe(0);
    expect(audio.length).toBeGreaterThan(0);
    expect(audio.length).toBe(summary.bytes);
    expect(proxy.counts.upgrades).toBeGreaterThan(upgrades);
    expect(proxy.paths).toContain('/v2/tts/live');

    const status = await fetchRequestStatus(summary.requestId, { rtHttpUrl: config.rtHttpUrl, apiKey: KEY });
    expect(status).toMatchObject({ kind: 'found', status: { state: 'completed' } });
    expect(proxy.paths).toContain(`/v2/tts/requests/${encodeURIComponent(summary.requestId)}`);
  });

  it('voices (discovery) and a sync TTS over REST', async () => {
    const voices = await listVoices(config);
    expect(voices.length).toBeGreaterThan(0);
    const voice = voices.find((v) => v.type !== 'personal') ?? voices[0]!;
    const client = createClient({ apiKey: config.apiKey, baseUrl: proxy.url });
    expect(client.http.baseUrl).toBe(config.baseUrl);
    const result = await client.tts.synthesize({ text: 'A sync line behind the prefix.', voiceId: voice.voiceId, format: 'wav' });
    expect(result.audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(proxy.paths).toContain('/api/open/v1/speech/tts');
  });

  it('nothing went around the prefix', () => {
    expect(proxy.counts.outside).toBe(0);
  });
});
