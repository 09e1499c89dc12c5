/**
 * A short segment over HTTP, against the real reference server through a
 * proxy that cuts the end off audio files: the WAV file still states its
 * whole `data` size, the HTTP framing is honest (Content-Length of what is
 * sent). The client fetches a short file once more (recovery); short again,
 * the run ends in `audio_incomplete` naming the segment, never a short file
 * with exit 0.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { AudioIncompleteError } from '../../../src/errors.js';
import { startServer, type ReferenceServer } from '../../../src/server/index.js';
import { serviceConfigOf } from '../../../src/service.js';
import { createSpeechStream } from '../../../src/speech.js';
import type { ServiceConfig } from '../../../src/config.js';
import { fakeIo } from '../../helpers/fake-io.js';
import { drain } from '../../helpers/speak.js';

const TEXT = 'The first sentence is short. The second one is a little longer than that.';
/** Bytes cut off the end of each audio file the proxy passes (whole 16-bit samples). */
const CUT = 600;

let server: ReferenceServer;
let proxy: Server;
let proxyOrigin: string;
/** Audio files the proxy still cuts short (Infinity: all). */
let toCut = 0;
let cut = 0;

beforeAll(async () => {
  server = await startServer({ engine: 'tone' });
  const target = new URL(server.rootUrl).origin;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers.set(k, v);
      headers.set('accept-encoding', 'identity');
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      void fetch(target + req.url, { method: req.method ?? 'GET', headers, ...(body && req.method !== 'GET' && { body }), redirect: 'manual' }).then(async (upstream) => {
        let data = Buffer.from(await upstream.arrayBuffer());
        const type = upstream.headers.get('content-type') ?? '';
        if (type.startsWith('audio/wav') && data.length > 44 + CUT && toCut > 0) {
          toCut--;
          cut++;
          data = data.subarray(0, data.length - CUT);
        }
        // Absolute URLs the server hands out (audio_url, redirects) lead back through the proxy.
        if (type.includes('json')) data = Buffer.from(data.toString('utf8').split(target).join(proxyOrigin));
        const out: Record<string, string> = {};
        upstream.headers.forEach((v, k) => {
          if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) out[k] = k === 'location' ? v.split(target).join(proxyOrigin) : v;
        });
        out['content-length'] = String(data.length);
        res.writeHead(upstream.status, out);
        res.end(data);
      });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await server.close();
});
beforeEach(() => {
  toCut = 0;
  cut = 0;
});

function viaProxy(config: ServiceConfig): ServiceConfig {
  const swap = (url: string) => proxyOrigin + url.slice(new URL(url).origin.length);
  return { ...config, baseUrl: swap(config.baseUrl), rootUrl: swap(config.rootUrl), rtHttpUrl: swap(config.rtHttpUrl) };
}

async function speak(transport: 'sync' | 'compat', format: 'pcm' | 'wav', config: ServiceConfig) {
  const speech = await createSpeechStream(config, { transport, format, segmenter: { targetChars: 20, firstMinChars: 12 } });
  const warnings: string[] = [];
  speech.on('warning', (w) => warnings.push(w.code));
  speech.end(TEXT);
  return { ...(await drain(speech)), warnings, summary: speech.summary() };
}

describe('an HTTP audio file shorter than it states', () => {
  for (const [transport, format] of [
    ['sync', 'pcm'],
    ['sync', 'wav'],
    ['compat', 'wav'],
  ] as const) {
    it(`${transport} ${format}: cut once, fetched again: the whole audio, byte-identical to an unbroken run`, async () => {
      const direct = serviceConfigOf(server);
      const reference = await speak(transport, format, direct);
      expect(reference.error).toBeUndefined();
      toCut = 1;
      const run = await speak(transport, format, viaProxy(direct));
      expect(cut).toBe(1);
      expect(run.error).toBeUndefined();
      expect(run.warnings).toContain('audio_refetched');
      expect(run.audio.equals(reference.audio)).toBe(true);
      for (const s of run.summary.segments) expect(s.receivedBytes).toBe(s.expectedBytes);
    });

    it(`${transport} ${format}: cut every time: audio_incomplete naming the segment and the missing range`, async () => {
      toCut = Infinity;
      const run = await speak(transport, format, viaProxy(serviceConfigOf(server)));
      expect(cut).toBeGreaterThanOrEqual(2);
      expect(run.error).toBeInstanceOf(AudioIncompleteError);
      const error = run.error as AudioIncompleteError;
      expect(error.code).toBe('audio_incomplete');
      expect(error.missing.to - error.missing.from).toBe(CUT);
      expect(run.summary.segments).toEqual([]);
    });
  }

  it('voxpipe say --transport sync: a file short every time exits non-zero with audio_incomplete, never 0 with less audio', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxpipe-short-'));
    const out = join(dir, 'x.wav');
    const config = viaProxy(serviceConfigOf(server));
    toCut = Infinity;
    const io = fakeIo({ VOXPIPE_BASE_URL: config.baseUrl, VOXPIPE_API_KEY: config.apiKey });
    const code = await main(['say', TEXT, '--transport', 'sync', '--format', 'wav', '--out', out, '--json'], io);
    expect(code).not.toBe(0);
    expect(io.err()).toContain('audio_incomplete');
    // No summary of a finished run.
    expect(io.out()).not.toContain('"bytes"');
  });
});
