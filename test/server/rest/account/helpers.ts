/** Helpers of the account-route tests: a server that accepts loopback URLs, reference audio, a pitch meter. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer, type ReferenceServer, type ServerOptions } from '../../../../src/server/index.js';
import { buildWavHeader, readWavHeader } from '../../../../src/protocol/wav.js';
import { ToneEngine } from '../../../../src/server/engines/index.js';
import { estimatePitch } from '../../../../src/server/voices/pitch.js';
import { resample } from '../../../../src/server/audio/resample.js';
import { ANALYSIS_RATE } from '../../../../src/server/voices/signal.js';

export { creditsOf, errorOf, get, newAccount, post, until, DEV_API_KEY, VOICE, MODEL } from '../helpers.js';

/** A tone-engine server on port 0 that accepts loopback URLs (reference audio, webhooks). */
export function startAccountServer(options: ServerOptions = {}): Promise<ReferenceServer> {
  return startServer({ engine: 'tone', port: 0, allowPrivateUrls: true, ...options });
}

/** A WAV of the tone engine speaking `text` with a voice of `basePitchHz`. */
export async function referenceWav(basePitchHz: number, text = 'Reference audio for a cloned voice, read slowly and clearly. It goes on for a while, as a clone needs at least ten seconds of speech: a few sentences more, each one calm and even, to the end.'): Promise<Buffer> {
  const engine = new ToneEngine();
  const chunks: Buffer[] = [];
  for await (const c of engine.synthesize(text, { voice: { basePitchHz, rate: 1, espeakVoice: 'en-us' } })) chunks.push(c);
  await engine.close();
  const pcm = Buffer.concat(chunks);
  return Buffer.concat([buildWavHeader({ sampleRate: engine.sampleRate, channels: 1, bitDepth: 16 }, pcm.length), pcm]);
}

/** Median F0 (Hz) of a 16-bit mono WAV file. */
export function pitchOfWav(wav: Buffer): number {
  const read = readWavHeader(wav);
  if (read.status !== 'header') throw new Error('not a WAV file');
  const header = read.header;
  const frames = Math.floor((wav.length - header.dataOffset) / 2);
  const samples = new Float32Array(frames);
  for (let i = 0; i < frames; i++) samples[i] = wav.readInt16LE(header.dataOffset + i * 2) / 32_768;
  const hz = estimatePitch(resample(samples, header.pcm.sampleRate, ANALYSIS_RATE)).medianHz;
  if (hz === undefined) throw new Error('no pitch found');
  return hz;
}

/** A local HTTP server on port 0 run by `handler`; `url` is its root. */
export async function localServer(handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A local server answering GET /<name> with the given files. */
export function fileServer(files: Record<string, { body: Buffer; type?: string }>): ReturnType<typeof localServer> {
  return localServer((req, res) => {
    const file = files[(req.url ?? '/').slice(1)];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.type ?? 'audio/wav', 'content-length': file.body.length }).end(file.body);
  });
}

/** Sum of a ledger's non-refunded entries of one currency. */
export function ledgerSum(server: ReferenceServer, userId: string, currency: 'credits' | 'quota'): number {
  return server.ctx.ledger.entriesOf(userId).filter((e) => e.currency === currency && e.state !== 'released').reduce((s, e) => s + e.amount, 0);
}

/** A tone-engine server with the default (strict) URL policy. */
export function startServerPlain(): Promise<ReferenceServer> {
  return startServer({ engine: 'tone', port: 0 });
}
