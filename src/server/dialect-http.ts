/**
 * The HTTP side of a dialect at the one place every reply passes (`app.ts`
 * writes replies and errors through here): error bodies and their content
 * types, redirect status and Location form, `Retry-After` as seconds or a
 * date, the Content-Type of wav, pcm, mp3 and opus audio (raw PCM under
 * L16 or GStreamer labels, its bytes big-endian where the label says so),
 * WAV files with extra chunks
 * before `data`, unknown fields on JSON bodies, gzip and chunked transfer,
 * and redirects to another origin (`startForeignHost`).
 * Routes keep answering in our own shapes; a preset changes nothing here.
 */
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, STATUS_CODES } from 'node:http';
import { DrainingResponse } from './http/response.js';
import { HEADERS } from '../protocol/rest.js';
import type { Dialect, WireStyle } from './dialect.js';
import { pick, rng, UNKNOWN_AUDIO_LABEL, UNKNOWN_NAMES, type Rng } from './dialect-random.js';
import type { Reply } from './http/router.js';

/** A REST error reply in the dialect's shape and content type (spec 7.1 describes both shapes; the type is open). */
export function errorReply(dialect: Pick<Dialect, 'errorBody' | 'wire'>, status: number, fields: { code: string; message: string; requestId: string } & Record<string, unknown>, headers?: Record<string, string | number>): Reply {
  const style = dialect.wire.errorContentType;
  const json = dialect.errorBody === 'flat' ? fields : { error: fields };
  if (style === 'problem') {
    return { status, headers: { ...headers, 'content-type': 'application/problem+json' }, body: JSON.stringify({ type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail: fields.message, ...fields }) };
  }
  if (style === 'text') return { status, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' }, body: `${fields.code}: ${fields.message} (request ${fields.requestId})\n` };
  if (style === 'html-500' && status >= 500) {
    const title = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
    const body = `<!DOCTYPE html>\n<html>\n<head><title>${title}</title></head>\n<body>\n<h1>${title}</h1>\n<p>The server hit a problem.\nRequest ${fields.requestId}.</p>\n</body>\n</html>\n`;
    return { status, headers: { ...headers, 'content-type': 'text/html; charset=utf-8' }, body };
  }
  return { status, json, ...(headers ? { headers } : {}) };
}

let responses = 0;

/** The dialect's form of a route's reply (before it is written). */
export function dialectReply(wire: WireStyle, reply: Reply): Reply {
  if (wire.seed === '') return reply; // a preset: our own wire
  const r = rng(wire.seed, `response-${++responses}`);
  const headers: Record<string, string | number> = { ...reply.headers };
  let { json, body } = reply;
  let status = reply.status;
  const location = headerOf(headers, 'location');
  if (status !== undefined && status >= 300 && status < 400 && location !== undefined) {
    status = wire.redirectStatus;
    const foreign = foreignOrigins.get(wire);
    if (foreign !== undefined) {
      // Another origin: the Location is absolute by necessity.
      const url = new URL(String(location));
      setHeader(headers, 'location', `${foreign}${url.pathname}${url.search}`);
    } else if (wire.redirectLocation === 'root-relative') {
      const url = new URL(String(location));
      setHeader(headers, 'location', `${url.pathname}${url.search}`);
    }
  }
  const retryAfter = headerOf(headers, 'retry-after');
  if (retryAfter !== undefined && wire.retryAfter === 'date' && Number.isFinite(Number(retryAfter))) {
    // An HTTP date has whole seconds: round up, and one more so truncation never shortens the wait.
    setHeader(headers, 'retry-after', new Date(Date.now() + (Math.ceil(Number(retryAfter)) + 1) * 1000).toUTCString());
  }
  const type = String(headerOf(headers, 'content-type') ?? '');
  if (type.startsWith('audio/wav') && Buffer.isBuffer(body)) {
    body = withWavChunks(body, wire.wavChunks);
    setHeader(headers, 'content-type', wire.wavContentType);
  }
  const rate = headerOf(headers, HEADERS.sampleRate);
  // A TTS route's pcm (it states its layout); the manifest's segment audio is the realtime frames' bytes, left as they are.
  if (type.startsWith('audio/pcm') && wire.pcmStatement !== 'headers' && rate !== undefined) {
    const channels = headerOf(headers, HEADERS.channels) ?? 1;
    const statement = wire.pcmStatement;
    if (statement === 'unknown-label') setHeader(headers, 'content-type', UNKNOWN_AUDIO_LABEL);
    else {
      // RFC 2586: L16 is network byte order; GStreamer says its order in `format`.
      const bigEndian = statement === 'l16' || statement === 'both' || statement === 'x-raw-be';
      if (bigEndian && Buffer.isBuffer(body)) body = Buffer.from(body.subarray(0, body.length - (body.length % 2))).swap16();
      const label = statement === 'x-raw' || statement === 'x-raw-be' ? `audio/x-raw, format=${bigEndian ? 'S16BE' : 'S16LE'}, rate=${rate}, channels=${channels}, layout=interleaved` : `audio/L16;rate=${rate};channels=${channels}`;
      setHeader(headers, 'content-type', label);
      // Only `both` keeps our headers next to the label: the others state the layout by the label alone.
      if (statement !== 'both') for (const h of [HEADERS.sampleRate, HEADERS.channels, HEADERS.bitDepth]) deleteHeader(headers, h);
    }
  }
  if (type.startsWith('audio/mpeg') && wire.mp3ContentType !== 'audio/mpeg') setHeader(headers, 'content-type', wire.mp3ContentType);
  if (type.startsWith('audio/ogg') && wire.opusContentType !== 'audio/ogg') setHeader(headers, 'content-type', wire.opusContentType);
  if (json !== undefined && wire.unknownFields > 0 && typeof json === 'object' && json !== null && !Array.isArray(json) && r() < wire.unknownFields) {
    json = { ...(json as Record<string, unknown>), [pick(r, UNKNOWN_NAMES.fields)]: unknownJson(r) };
  }
  return { ...reply, ...(status !== undefined ? { status } : {}), headers, ...(json !== undefined ? { json } : {}), ...(body !== undefined ? { body } : {}) };
}

/** The other origin of each wire whose redirects go there (`startForeignHost`). */
const foreignOrigins = new WeakMap<WireStyle, string>();

/** Another origin of a server: `origin` to redirect to, `close()` to stop it. */
export interface ForeignHost {
  origin: string;
  close(): Promise<void>;
}

/**
 * Where a dialect draws redirects to another host (`redirectHost: 'other'`):
 * a second listener on `host`, another port (another origin, as a CDN or a
 * storage bucket would be), that `serve`s the same routes, so a signed URL
 * works there without a key. A request that brings an `Authorization` header
 * is `refuse`d: the key was sent to an origin that is not the service's
 * (spec 5: the key goes to the service only; src/http/client.ts sends it to
 * the service's origins alone). Redirects of `wire` point there from then on.
 */
export async function startForeignHost(
  wire: WireStyle,
  host: string,
  serve: (req: IncomingMessage, res: ServerResponse) => void,
  refuse: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<ForeignHost> {
  // Early answers are drained as on the main listener (`http/response.ts`).
  const server = createServer({ ServerResponse: DrainingResponse }, (req, res) => {
    if (req.headers.authorization !== undefined) refuse(req, res);
    else serve(req, res);
  });
  server.keepAliveTimeout = 5_000; // 5 s, as the main listener
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const hostPart = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const origin = `http://${hostPart}:${(server.address() as AddressInfo).port}`;
  foreignOrigins.set(wire, origin);
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        foreignOrigins.delete(wire);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function unknownJson(r: Rng): unknown {
  return pick(r, ['x', 42, null, true, { nested: { list: [1, 'two'] } }, ['a', 1]]);
}

/** Write a reply: gzip when the client accepts it and the dialect compresses, chunked when it streams. */
export function writeDialectReply(wire: WireStyle, req: IncomingMessage, res: ServerResponse, reply: Reply, head: boolean): void {
  const headers: Record<string, string | number> = { ...reply.headers };
  let body: Buffer | string | undefined = reply.body;
  if (reply.json !== undefined) {
    body = JSON.stringify(reply.json);
    if (headerOf(headers, 'content-type') === undefined) headers['content-type'] = 'application/json; charset=utf-8';
  }
  let bytes = body === undefined ? undefined : Buffer.from(body);
  if (bytes !== undefined && bytes.length > 0 && wire.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    bytes = gzipSync(bytes);
    headers['content-encoding'] = 'gzip';
    headers['vary'] = 'accept-encoding';
  }
  if (bytes !== undefined && !wire.chunked) headers['content-length'] = bytes.length;
  res.writeHead(reply.status ?? 200, headers);
  if (head || bytes === undefined) {
    res.end();
    return;
  }
  if (!wire.chunked) {
    res.end(bytes);
    return;
  }
  // Chunked: no length, the body in a few writes.
  const third = Math.max(1, Math.ceil(bytes.length / 3));
  for (let at = 0; at < bytes.length; at += third) res.write(bytes.subarray(at, at + third));
  res.end();
}

function headerOf(headers: Record<string, string | number>, name: string): string | number | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

function setHeader(headers: Record<string, string | number>, name: string, value: string | number): void {
  deleteHeader(headers, name);
  headers[name] = value;
}

function deleteHeader(headers: Record<string, string | number>, name: string): void {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
}

/**
 * A complete WAV file (RIFF size and data size exact) with `chunks` put
 * between `fmt ` and `data`; anything else (a streaming header with unknown
 * sizes, not a WAV) is returned as it is.
 */
export function withWavChunks(file: Buffer, chunks: readonly ('LIST' | 'fact')[]): Buffer {
  if (chunks.length === 0 || file.length < 44 || file.toString('latin1', 0, 4) !== 'RIFF' || file.toString('latin1', 8, 12) !== 'WAVE') return file;
  if (file.readUInt32LE(4) !== file.length - 8) return file;
  // Find `data` after the chunks before it.
  let at = 12;
  let blockAlign = 2;
  while (at + 8 <= file.length) {
    const id = file.toString('latin1', at, at + 4);
    const size = file.readUInt32LE(at + 4);
    if (id === 'fmt ') blockAlign = file.readUInt16LE(at + 8 + 12) || 2;
    if (id === 'data') break;
    at += 8 + size + (size % 2);
  }
  if (at + 8 > file.length) return file;
  const dataSize = file.readUInt32LE(at + 4);
  const extra = chunks.map((kind) => (kind === 'LIST' ? listChunk() : factChunk(Math.floor(dataSize / blockAlign))));
  const out = Buffer.concat([file.subarray(0, at), ...extra, file.subarray(at)]);
  out.writeUInt32LE(out.length - 8, 4);
  return out;
}

/** A LIST/INFO chunk naming the software, odd-sized text padded to even as RIFF wants. */
function listChunk(): Buffer {
  const text = Buffer.from('voxpipe dialect\0', 'latin1'); // 16 bytes
  const info = Buffer.alloc(4 + 8 + text.length);
  info.write('INFO', 0, 'latin1');
  info.write('ISFT', 4, 'latin1');
  info.writeUInt32LE(text.length, 8);
  text.copy(info, 12);
  const head = Buffer.alloc(8);
  head.write('LIST', 0, 'latin1');
  head.writeUInt32LE(info.length, 4);
  return Buffer.concat([head, info]);
}

function factChunk(frames: number): Buffer {
  const chunk = Buffer.alloc(12);
  chunk.write('fact', 0, 'latin1');
  chunk.writeUInt32LE(4, 4);
  chunk.writeUInt32LE(frames, 8);
  return chunk;
}
