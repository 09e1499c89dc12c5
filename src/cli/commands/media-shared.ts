/**
 * What the media commands (`transcribe`, `image`, `video`, `lipsync`) share:
 * turning a local file into a URL the service can fetch, polling with
 * progress on a terminal, and writing a result file.
 *
 * The service fetches inputs by URL. A local FILE is served from a
 * temporary HTTP server on 127.0.0.1 for the duration of the command: that
 * works with the embedded server (it accepts loopback URLs) and with a
 * reference server on this machine started with `--allow-private-urls`; a
 * remote service needs a public URL, and says so with a 400.
 */
import { createReadStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { basename, extname, resolve } from 'node:path';
import type { ServiceConfig } from '../../config.js';
import { createClient, type VoxpipeClient } from '../../http/index.js';
import type { JobEvent, PollOptions } from '../../http/job-handle.js';
import type { BaseTask } from '../../http/task.js';
import { numberOption, UsageError } from '../args.js';
import { checkOutPath } from '../out-path.js';
import { note, unreadable, type Io } from '../io.js';
import type { Service } from '../service.js';

/** Content types of local input files, by extension. */
export const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.flac': 'audio/flac',
  '.m4a': 'audio/mp4',
  '.aac': 'audio/aac',
  '.webm': 'video/webm',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.mkv': 'video/x-matroska',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
};

/** Poll options of the embedded server: it is local, so a job is read every 200 ms growing to 1 s. */
const EMBEDDED_POLL = { intervalMs: 200, maxIntervalMs: 1_000 } as const;

/** Whether `value` is an http(s) URL (else it names a local file). */
export function isUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

/** Serves local files on 127.0.0.1 under unguessable paths until closed. */
export class LocalFiles {
  #server: Server | undefined;
  #base: string | undefined;
  readonly #files = new Map<string, { path: string; size: number; contentType: string }>();
  /** The service's host, when it is not on this machine (it cannot fetch a file served from 127.0.0.1). */
  readonly #remoteHost: string | undefined;

  /** @param serviceUrl the service's `{base_url}`; local files work only when it is on this machine */
  constructor(serviceUrl?: string) {
    const host = serviceUrl === undefined ? undefined : new URL(serviceUrl).hostname.replace(/^\[|\]$/g, '');
    this.#remoteHost = host === undefined || host === 'localhost' || host === '::1' || host.startsWith('127.') ? undefined : host;
  }

  /**
   * A URL for `input`: itself when it is an http(s) URL, else the local file
   * served from 127.0.0.1. `what` names the option in errors (e.g. `--audio`).
   */
  async urlOf(input: string, what: string): Promise<string> {
    if (isUrl(input)) return input;
    if (this.#remoteHost !== undefined) {
      throw new UsageError(`${what}: ${input} is a file on this machine, which the service at ${this.#remoteHost} cannot fetch; give a public http(s) URL instead`);
    }
    const path = resolve(input);
    let size: number;
    try {
      const info = await stat(path);
      if (!info.isFile()) throw new Error('not a file');
      size = info.size;
    } catch (err) {
      throw new UsageError(`${what}: ${unreadable(input, err)}`);
    }
    const base = await this.#start();
    const route = `/${randomBytes(12).toString('base64url')}/${encodeURIComponent(basename(path))}`;
    this.#files.set(route, { path, size, contentType: MEDIA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream' });
    return `${base}${route}`;
  }

  async #start(): Promise<string> {
    if (this.#base) return this.#base;
    const server = createServer((req, res) => {
      const file = this.#files.get((req.url ?? '').split('?')[0]!);
      if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.size });
      if (req.method === 'HEAD') res.end();
      else createReadStream(file.path).on('error', () => res.destroy()).pipe(res);
    });
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', () => ok());
    });
    this.#server = server;
    this.#base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.#base;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    await new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  }
}

/** The REST client of a service. */
export function clientOf(config: ServiceConfig): VoxpipeClient {
  return createClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, rootUrl: config.rootUrl });
}

/**
 * Poll options of a command: `--interval-ms` when given, fast on the
 * embedded server, else the spec's 3 s growing to 5 s; progress on standard
 * error when it is a terminal.
 */
export function pollOptionsOf<T extends BaseTask>(service: Service, io: Io, label: string, intervalText: string | undefined): PollOptions<T> {
  const intervalMs = numberOption(intervalText, 'interval-ms', 10, 60_000);
  const timing = intervalMs !== undefined ? { intervalMs, maxIntervalMs: Math.max(intervalMs, 5_000) } : service.embedded || service.dataDir !== undefined ? EMBEDDED_POLL : {};
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  const started = Date.now();
  const onProgress = tty
    ? (e: JobEvent<T>) => io.stderr.write(`\r\u001b[2Kvoxpipe: ${label} ${e.task.id} ${e.task.rawStatus} (${((Date.now() - started) / 1000).toFixed(1)} s)${e.status === 'succeeded' || e.status === 'failed' ? '\n' : ''}`)
    : undefined;
  return { ...timing, ...(onProgress && { onProgress }) };
}

/**
 * Before any request: refuse `--json` together with `--out -` (both would
 * use standard output), and an `--out` that cannot be written or whose
 * extension is not the format the service returns (`extensions`: the file
 * would not hold what its name says).
 */
export async function checkOutput(values: { json?: boolean | undefined; out?: string | undefined }, extensions: readonly string[]): Promise<void> {
  if (values.json && values.out === '-') throw new UsageError('--json and --out - both write to standard output; choose one');
  if (values.out !== undefined) await checkOutPath(values.out, new Set(extensions));
}

/**
 * Write a result: to standard output for `--out -`, to `--out FILE`, or to
 * `defaultName` in the current directory. Returns the path written, or null for standard output.
 */
export async function writeResult(io: Io, out: string | undefined, data: Buffer, defaultName: string): Promise<string | null> {
  if (out === '-') {
    await new Promise<void>((ok, fail) => io.stdout.write(data, (err) => (err ? fail(err) : ok())));
    return null;
  }
  const path = resolve(out ?? defaultName);
  await writeFile(path, data);
  return path;
}

/** Tell the user where the result went (standard error), unless it went to standard output. */
export function noteWritten(io: Io, path: string | null, bytes: number, what: string): void {
  if (path !== null) note(io, `wrote ${what} (${bytes} bytes) to ${path}`);
}

/** The catalog's default model (`default: true`), else its first, else `fallback`. */
export function defaultModelOf(models: readonly { id: string | undefined; raw: Record<string, unknown> }[], fallback: string): string {
  return models.find((m) => m.raw['default'] === true)?.id ?? models[0]?.id ?? fallback;
}

/** One JSON line describing a finished media task and where its result went. */
export function mediaSummary(task: BaseTask & { resultUrl: string | undefined; model: string | undefined }, file: { path: string | null; bytes: number; contentType: string }) {
  return {
    id: task.id,
    status: task.status,
    model: task.model ?? null,
    resultUrl: task.resultUrl ?? null,
    file: file.path,
    bytes: file.bytes,
    contentType: file.contentType,
    creditsCharged: task.creditsCharged ?? null,
  };
}
