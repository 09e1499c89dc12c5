/**
 * Helpers of the media tests: a reference server on port 0 that accepts
 * loopback inputs, a local HTTP server holding the input files, WAV makers,
 * JSON calls with or without a key, polling, and ffprobe.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type ReferenceServer, type ServerOptions } from '../../../src/server/index.js';
import type { AccountSeed } from '../../../src/server/app.js';
import { buildWavHeader } from '../../../src/protocol/wav.js';
import { detectMediaTools } from '../../../src/server/media-engines/tools.js';
import { has } from '../../helpers/needs.js';

export const TOOLS = detectMediaTools();
export const HAS_FFMPEG = has('ffmpeg', 'ffprobe');
export const HAS_RECOGNIZER = has('pocketsphinx');

/** Start a tone-engine server that accepts loopback input URLs. */
export function startMediaServer(options: ServerOptions = {}): Promise<ReferenceServer> {
  return startServer({ engine: 'tone', allowPrivateUrls: true, port: 0, ...options });
}

let seq = 0;
/** A fresh account (ample credits and quota unless set). */
export function newAccount(server: ReferenceServer, seed: Partial<AccountSeed> = {}): { key: string; userId: string } {
  seq++;
  const key = seed.apiKey ?? `sk-media-${process.pid}-${seq}-${Math.random().toString(36).slice(2)}`;
  const userId = seed.userId ?? `media-user-${seq}-${Math.random().toString(36).slice(2, 8)}`;
  server.addAccount({ credits: 1_000_000, apiQuota: 1_000_000, ...seed, apiKey: key, userId });
  return { key, userId };
}

/**
 * The account's charges, oldest first: what was held, in which currency, and
 * where it ended (`released`: refunded). A job that fails fast may be
 * refunded before its creator's reply arrives, so a charge is read here
 * rather than from the balance at that moment.
 */
export function charges(server: ReferenceServer, userId: string): { amount: number; currency: string; state: string }[] {
  return server.ctx.ledger.entriesOf(userId).reverse().map((e) => ({ amount: e.amount, currency: e.currency, state: e.state }));
}

export function balances(server: ReferenceServer, userId: string): { credits: number; quota: number } {
  const a = server.ctx.store.accounts.get(userId)!;
  return { credits: a.credits, quota: a.apiQuota };
}

export interface Reply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  headers: Headers;
}

/** A JSON call. `key: null` sends no Authorization header. */
export async function call(method: string, url: string, options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== null && options.key !== undefined) headers['authorization'] = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, ...(options.body === undefined ? {} : { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}

/** Poll `read` until `done` holds; fails the test after `timeoutMs`. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

/** A local HTTP server of input files (loopback): `put` a file, pass `url(path)` to the service. */
export interface InputServer {
  url(path: string): string;
  put(path: string, contentType: string, data: Buffer): string;
  /** Paths requested so far. */
  requests: string[];
  close(): Promise<void>;
}

export async function startInputServer(): Promise<InputServer> {
  const files = new Map<string, { contentType: string; data: Buffer }>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    const file = files.get(path);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.data.length }).end(file.data);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${base}${path}`,
    put(path, contentType, data) {
      files.set(path, { contentType, data });
      return `${base}${path}`;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A 16-bit mono WAV of `samples`. */
export function wavOf(samples: Int16Array, sampleRate: number): Buffer {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  return Buffer.concat([buildWavHeader({ sampleRate, channels: 1, bitDepth: 16 }, data.length), data]);
}

/** `seconds` of digital silence as a 16 kHz WAV. */
export function silenceWav(seconds: number, sampleRate = 16_000): Buffer {
  return wavOf(new Int16Array(Math.round(seconds * sampleRate)), sampleRate);
}

/** `seconds` of a sine at `hz` whose loudness follows a slow envelope (so it can be recognised in a copy). */
export function toneWav(seconds: number, hz = 440, sampleRate = 22_050): Buffer {
  const n = Math.round(seconds * sampleRate);
  const samples = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / sampleRate;
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 1.5 * t);
    samples[i] = Math.round(12_000 * envelope * Math.sin(2 * Math.PI * hz * t));
  }
  return wavOf(samples, sampleRate);
}

export interface ProbedStream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  sample_rate?: string;
  channels?: number;
  duration?: string;
}

/** ffprobe's streams and format of a file given as bytes. */
export function ffprobe(data: Buffer): { streams: ProbedStream[]; format: { format_name: string; duration?: string } } {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-media-test-'));
  try {
    const path = join(dir, 'file');
    writeFileSync(path, data);
    const out = execFileSync(TOOLS.ffprobe!, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
    return JSON.parse(out.toString('utf8')) as { streams: ProbedStream[]; format: { format_name: string; duration?: string } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Decode the audio of a media file to 8 kHz mono s16le with ffmpeg. */
export function decodeAudioTrack(data: Buffer): Int16Array {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-media-test-'));
  try {
    const path = join(dir, 'file');
    writeFileSync(path, data);
    const out = execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-i', path, '-vn', '-ac', '1', '-ar', '8000', '-f', 's16le', 'pipe:1'], { maxBuffer: 64 * 1024 * 1024 });
    return new Int16Array(out.buffer, out.byteOffset, Math.floor(out.length / 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** RMS loudness of consecutive windows of `samples`. */
export function envelope(samples: Int16Array, window: number): number[] {
  const out: number[] = [];
  for (let at = 0; at + window <= samples.length; at += window) {
    let sum = 0;
    for (let i = at; i < at + window; i++) sum += samples[i]! * samples[i]!;
    out.push(Math.sqrt(sum / window));
  }
  return out;
}

/** Pearson correlation of two series (cut to the shorter). */
export function correlation(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  const ma = a.slice(0, n).reduce((s, v) => s + v, 0) / n;
  const mb = b.slice(0, n).reduce((s, v) => s + v, 0) / n;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < n; i++) {
    num += (a[i]! - ma) * (b[i]! - mb);
    da += (a[i]! - ma) ** 2;
    db += (b[i]! - mb) ** 2;
  }
  return num / Math.sqrt(da * db);
}

/** Download a result URL with the key (follows the signed redirect). */
export async function download(url: string, key: string): Promise<{ status: number; contentType: string | null; data: Buffer; redirectedTo: string }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, contentType: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()), redirectedTo: res.url };
}

/** A short test-pattern MP4 without audio, made by ffmpeg. */
export function testVideo(seconds: number, width = 160, height = 120): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'voxpipe-media-test-'));
  try {
    const path = join(dir, 'video.mp4');
    execFileSync(TOOLS.ffmpeg!, ['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=10`, '-t', String(seconds), '-pix_fmt', 'yuv420p', '-c:v', 'mpeg4', path]);
    return readFileSync(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
