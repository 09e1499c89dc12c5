/**
 * One place derives every URL from the configuration, prefix-safe,
 * and a bad configuration has one code per mistake whatever the entry point:
 * `missing_api_key` without a key, `invalid_config` for a URL that cannot be
 * used; the REST client's constructor, `createClient`, `createSpeechStream`,
 * `configFromEnv` and the CLI agree, and no message carries the key.
 */
import { describe, expect, it } from 'vitest';
import { configFromEnv, deriveRootUrl, liveUrl, requestStatusUrl, segmentAudioUrl, serviceUrls, type ServiceConfig } from '../src/config.js';
import { main } from '../src/cli/main.js';
import { HttpClient } from '../src/http/client.js';
import { createClient } from '../src/http/index.js';
import { createSpeechStream } from '../src/speech.js';
import { fakeIo } from './helpers/fake-io.js';

const KEY = 'sk-test-config-errors-0123456789';

describe('serviceUrls: every root from one URL', () => {
  it.each([
    ['https://host/api/open/v1', { baseUrl: 'https://host/api/open/v1', rootUrl: 'https://host', rtHttpUrl: 'https://host', wsUrl: 'wss://host' }],
    ['https://host', { baseUrl: 'https://host/api/open/v1', rootUrl: 'https://host', rtHttpUrl: 'https://host', wsUrl: 'wss://host' }],
    ['https://host/prefix', { baseUrl: 'https://host/prefix/api/open/v1', rootUrl: 'https://host/prefix', rtHttpUrl: 'https://host/prefix', wsUrl: 'wss://host/prefix' }],
    ['https://host/prefix/api/open/v1/', { baseUrl: 'https://host/prefix/api/open/v1', rootUrl: 'https://host/prefix', rtHttpUrl: 'https://host/prefix', wsUrl: 'wss://host/prefix' }],
    ['http://127.0.0.1:8765/a/b/', { baseUrl: 'http://127.0.0.1:8765/a/b/api/open/v1', rootUrl: 'http://127.0.0.1:8765/a/b', rtHttpUrl: 'http://127.0.0.1:8765/a/b', wsUrl: 'ws://127.0.0.1:8765/a/b' }],
  ])('%s', (baseUrl, expected) => {
    expect(serviceUrls({ baseUrl })).toEqual(expected);
    expect(deriveRootUrl(baseUrl)).toBe(expected.rootUrl);
  });

  it('a realtime root given on its own is where the WebSocket goes too; a given ws root wins', () => {
    expect(serviceUrls({ baseUrl: 'https://host/p', rtHttpUrl: 'https://rt.host/q/' })).toMatchObject({ rootUrl: 'https://host/p', rtHttpUrl: 'https://rt.host/q', wsUrl: 'wss://rt.host/q' });
    expect(serviceUrls({ baseUrl: 'https://host/p', wsUrl: 'wss://ws.host/w' })).toMatchObject({ rtHttpUrl: 'https://host/p', wsUrl: 'wss://ws.host/w' });
  });

  it('the routes under the roots keep the prefix', () => {
    expect(liveUrl('wss://host/prefix/')).toBe('wss://host/prefix/v2/tts/live');
    expect(requestStatusUrl('https://host/prefix', 'req 1')).toBe('https://host/prefix/v2/tts/requests/req%201');
    // A server behind a prefix proxy does not know the prefix: a path it names is under the realtime root.
    expect(segmentAudioUrl('https://host/prefix', '/v2/tts/requests/r/segments/0/audio')).toBe('https://host/prefix/v2/tts/requests/r/segments/0/audio');
    expect(segmentAudioUrl('https://host/prefix', '/prefix/a.pcm')).toBe('https://host/prefix/a.pcm');
    expect(segmentAudioUrl('https://host', '/a.pcm')).toBe('https://host/a.pcm');
    expect(segmentAudioUrl('https://host/prefix', 'https://cdn.example/a.pcm')).toBe('https://cdn.example/a.pcm');
  });
});

const good: ServiceConfig = { apiKey: KEY, ...serviceUrls({ baseUrl: 'http://127.0.0.1:9/api/open/v1' }) };

/** The error of `f`, thrown or rejected. */
async function errorOf(f: () => unknown): Promise<{ code?: string; message?: string }> {
  try {
    await f();
  } catch (err) {
    return err as { code?: string; message?: string };
  }
  throw new Error('expected an error');
}

/** The CLI's one stderr line for `say` with this environment. */
async function cliLine(env: NodeJS.ProcessEnv): Promise<{ line: string; code: number }> {
  const io = fakeIo(env);
  const code = await main(['say', 'Hi.', '--out', 'x.wav'], io);
  const line = io.err().trim().split('\n').filter((l) => l.includes('error'))[0] ?? '';
  return { line, code };
}

describe('one code per configuration mistake, whatever the entry point', () => {
  it('no key: missing_api_key from the client, createClient, createSpeechStream, configFromEnv and the CLI', async () => {
    const errors = {
      httpClient: await errorOf(() => new HttpClient({ apiKey: '', baseUrl: good.baseUrl })),
      createClient: await errorOf(() => createClient({ apiKey: ' ', baseUrl: good.baseUrl })),
      speechStream: await errorOf(() => createSpeechStream({ ...good, apiKey: '' })),
      configFromEnv: await errorOf(() => configFromEnv({ VOXPIPE_BASE_URL: good.baseUrl })),
    };
    for (const [where, error] of Object.entries(errors)) expect(error.code, where).toBe('missing_api_key');
    const cli = await cliLine({ VOXPIPE_BASE_URL: good.baseUrl });
    expect(cli.line).toMatch(/^voxpipe: error missing_api_key: .*VOXPIPE_API_KEY/);
    expect(cli.code).toBe(1);
  });

  it('a URL that cannot be used: invalid_config from each, naming the setting, never the key', async () => {
    const errors = {
      httpClient: await errorOf(() => new HttpClient({ apiKey: KEY, baseUrl: 'ftp://host/api/open/v1' })),
      httpClientRoot: await errorOf(() => new HttpClient({ apiKey: KEY, baseUrl: good.baseUrl, rootUrl: 'not a url' })),
      createClient: await errorOf(() => createClient({ apiKey: KEY, baseUrl: 'not a url' })),
      speechStream: await errorOf(() => createSpeechStream({ ...good, wsUrl: 'ftp://host' })),
      configFromEnv: await errorOf(() => configFromEnv({ VOXPIPE_BASE_URL: 'not a url', VOXPIPE_API_KEY: KEY })),
      configFromEnvWs: await errorOf(() => configFromEnv({ VOXPIPE_BASE_URL: good.baseUrl, VOXPIPE_WS_URL: 'ftp://x', VOXPIPE_API_KEY: KEY })),
    };
    for (const [where, error] of Object.entries(errors)) {
      expect(error.code, where).toBe('invalid_config');
      expect(error.message, where).not.toContain(KEY);
    }
    expect(errors.httpClient.message).toMatch(/^baseUrl must be an http or https URL/);
    expect(errors.httpClientRoot.message).toMatch(/^rootUrl is not a URL/);
    expect(errors.speechStream.message).toMatch(/^wsUrl /);
    expect(errors.configFromEnv.message).toMatch(/^VOXPIPE_BASE_URL is not a URL/);
    expect(errors.configFromEnvWs.message).toMatch(/^VOXPIPE_WS_URL must be/);
    const cli = await cliLine({ VOXPIPE_BASE_URL: 'ftp://host/api/open/v1', VOXPIPE_API_KEY: KEY });
    expect(cli.line).toMatch(/^voxpipe: error invalid_config: VOXPIPE_BASE_URL must be an http or https URL/);
    expect(cli.line).not.toContain(KEY);
  });
});
