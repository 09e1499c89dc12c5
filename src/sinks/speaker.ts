/**
 * Playback through the optional `speaker` package (native, ALSA/CoreAudio/...).
 *
 * Opening a device that does not exist must be tested in a child process:
 * speaker 0.5's ALSA backend aborts the whole process (a failed C assertion in
 * `snd_pcm_hw_refine`) when no sound card is present, which no try/catch can
 * stop. So `probeSpeaker` opens the device in a short-lived child, playing
 * 20 ms of silence, and only a positive probe lets `openSpeaker` construct a
 * `Speaker` in this process.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import type { Writable } from 'node:stream';
import { UnavailableError } from '../errors.js';
import type { PcmInfo } from '../protocol/audio.js';
import { BaseSink, sinkError, type SinkOptions } from './base-sink.js';
import { SinkKind, type SinkResult } from './types.js';
import type { Clock } from './clock.js';
import { PlayHead, type PlayedPosition } from './play-head.js';

const require = createRequire(import.meta.url);

/** The part of `speaker`'s class voxpipe uses. */
interface SpeakerInstance extends Writable {
  close(flush: boolean): unknown;
}
type SpeakerConstructor = new (options: { channels: number; bitDepth: number; sampleRate: number; device?: string }) => SpeakerInstance;

export interface SpeakerProbeOptions {
  /** Module to load; default `speaker`. Tests point it at a stand-in. */
  module?: string;
  /** Output device name passed to `speaker` (e.g. an ALSA PCM); default the system default. */
  device?: string;
  /** Give up on a probe that has not finished by then; default 5000 ms. */
  timeoutMs?: number;
  /** Probe again instead of using the answer cached for this process; default false. */
  refresh?: boolean;
}

export interface SpeakerOptions extends SpeakerProbeOptions, SinkOptions {
  /** Clock the played position follows; default the system clock. */
  clock?: Clock;
}

/** Whether `speaker` can play here, and why not. */
export interface SpeakerProbe {
  available: boolean;
  /** Why it cannot play, when it cannot. */
  reason?: string;
}

// The probe, run by `node -e` with the module path as argv[1]: exit 0 once the device played silence and closed.
const PROBE_SCRIPT = `
const Speaker = require(process.argv[1]);
const device = process.argv[2] || undefined;
const s = new Speaker({ channels: 1, bitDepth: 16, sampleRate: 48000, device });
s.on('error', (e) => { process.stderr.write(String(e && e.message) + '\\n'); process.exit(2); });
s.on('close', () => process.exit(0));
s.end(Buffer.alloc(1920));
`;

const probeCache = new Map<string, Promise<SpeakerProbe>>();
/** Keys of the probes that succeeded: the only module/device pairs this process may open. */
const playable = new Set<string>();

function probeKey(options: SpeakerProbeOptions): string {
  return `${options.module ?? 'speaker'}\0${options.device ?? ''}`;
}

function resolveModule(specifier: string): string | undefined {
  try {
    return require.resolve(specifier);
  } catch {
    return undefined;
  }
}

/**
 * Find out, in a child process, whether `speaker` is installed and can open
 * the output device. Cached per process (per module and device).
 */
export function probeSpeaker(options: SpeakerProbeOptions = {}): Promise<SpeakerProbe> {
  const key = probeKey(options);
  const cached = probeCache.get(key);
  if (cached && !options.refresh) return cached;
  const probe = runProbe(options).then((result) => {
    if (result.available) playable.add(key);
    else playable.delete(key);
    return result;
  });
  probeCache.set(key, probe);
  return probe;
}

/** Whether `speaker` can play here (see `probeSpeaker`). */
export async function speakerAvailable(options: SpeakerProbeOptions = {}): Promise<boolean> {
  return (await probeSpeaker(options)).available;
}

function runProbe(options: SpeakerProbeOptions): Promise<SpeakerProbe> {
  const specifier = options.module ?? 'speaker';
  const resolved = resolveModule(specifier);
  if (!resolved) return Promise.resolve({ available: false, reason: `${specifier} is not installed (npm install speaker)` });
  const timeoutMs = options.timeoutMs ?? 5_000; // ms
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', PROBE_SCRIPT, resolved, options.device ?? ''], {
      // An aborting backend may dump core into its working directory: keep that out of the user's project.
      cwd: tmpdir(),
      stdio: ['ignore', 'ignore', 'pipe'],
      windowsHide: true,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      stderr = (stderr + text).slice(-2048);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ available: false, reason: `cannot run the probe: ${error.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ available: true });
      const how = timedOut ? `timed out after ${timeoutMs} ms` : signal ? `crashed (${signal})` : `failed (exit code ${code})`;
      const lines = stderr.trim().split('\n').filter((line) => line.length > 0);
      resolve({ available: false, reason: `opening the audio device ${how}${lines.length ? `: ${lines.slice(-2).join(' | ')}` : ''}` });
    });
  });
}

/** Plays s16le PCM through a `speaker` instance; write callbacks wait for the device. */
export class SpeakerSink extends BaseSink implements PlayedPosition {
  readonly kind = SinkKind.speaker;
  private speakerClosed = false;
  private readonly head: PlayHead;

  constructor(
    readonly pcm: PcmInfo,
    private readonly speaker: SpeakerInstance,
    options: SinkOptions & { clock?: Clock } = {},
  ) {
    super(options);
    this.head = new PlayHead(pcm, options.clock);
    speaker.once('close', () => {
      this.speakerClosed = true;
    });
    speaker.on('error', (error: Error) => this.destroy(sinkError('speaker failed', error)));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytesIn += chunk.length;
    this.head.wrote(chunk.length);
    this.speaker.write(chunk, (error) => callback(error ? sinkError('speaker write failed', error) : undefined));
  }

  override _final(callback: (error?: Error | null) => void): void {
    // speaker closes its device after 'finish', once the queued audio has been handed over.
    if (this.speakerClosed) return callback();
    this.speaker.once('close', () => callback());
    this.speaker.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Aborted: drop what the device still holds instead of playing it out.
    if (!this.speakerClosed && error) this.speaker.close(true);
    if (error) this.head.stop();
    callback(error);
  }

  /** Bytes played so far, by the clock from the first write (the device does not say). */
  get playedBytes(): number {
    return this.head.playedBytes;
  }

  protected result(): SinkResult {
    return { kind: this.kind, bytesIn: this.bytesIn, pcm: this.pcm };
  }
}

/**
 * Open the output device through `speaker` for `pcm`.
 * @throws UnavailableError when `speaker` is not installed or cannot open a device here
 */
export async function openSpeaker(pcm: PcmInfo, options: SpeakerOptions = {}): Promise<SpeakerSink> {
  const probe = await probeSpeaker(options);
  if (!probe.available) throw new UnavailableError(`speaker cannot play here: ${probe.reason ?? 'unknown reason'}`);
  return createSpeakerSink(pcm, options);
}

/**
 * Construct the sink once a probe has succeeded (synchronous, for compositions
 * that learn the PCM layout late).
 * @throws UnavailableError unless `probeSpeaker` found this module and device playable
 */
export function createSpeakerSink(pcm: PcmInfo, options: SpeakerOptions = {}): SpeakerSink {
  // In-process opening of a missing device aborts the process: see the module comment.
  if (!playable.has(probeKey(options))) throw new UnavailableError('speaker was not probed playable here (call openSpeaker or probeSpeaker first)');
  const specifier = options.module ?? 'speaker';
  const resolved = resolveModule(specifier);
  if (!resolved) throw new UnavailableError(`${specifier} is not installed (npm install speaker)`);
  const Speaker = require(resolved) as SpeakerConstructor;
  const speaker = new Speaker({
    channels: pcm.channels,
    bitDepth: pcm.bitDepth,
    sampleRate: pcm.sampleRate,
    ...(options.device === undefined ? {} : { device: options.device }),
  });
  return new SpeakerSink(pcm, speaker, {
    ...(options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
}
