/**
 * Playback through an external program reading PCM on stdin: ffplay, aplay
 * or paplay, whichever is installed and can open an audio device. Used when
 * the optional `speaker` package is missing or cannot play.
 *
 * Finding the program on PATH is not enough: ffplay without a sound card
 * prints "audio open failed" and still exits 0. So availability is probed by
 * feeding the player 20 ms of silence (inaudible) and reading its verdict.
 */
import { spawn } from 'node:child_process';
import { UnavailableError, type VoxpipeError } from '../errors.js';
import type { PcmInfo } from '../protocol/audio.js';
import { frameBytes } from '../protocol/audio.js';
import type { SinkOptions } from './base-sink.js';
import type { Clock } from './clock.js';
import { PlayHead, type PlayedPosition } from './play-head.js';
import { ProcessSink } from './process-sink.js';
import { SinkKind, type SinkResult } from './types.js';
import { findOnPath } from './which.js';

export const PlayerName = {
  ffplay: 'ffplay',
  aplay: 'aplay',
  paplay: 'paplay',
} as const;
export type PlayerName = (typeof PlayerName)[keyof typeof PlayerName];

/** Preference order when none is named. */
export const PLAYER_ORDER: readonly PlayerName[] = [PlayerName.ffplay, PlayerName.aplay, PlayerName.paplay];

interface PlayerSpec {
  args(pcm: PcmInfo): string[];
  /** Stderr text meaning no device could be opened. */
  noDevice: RegExp;
}

function channelLayout(channels: number): string {
  return channels === 1 ? 'mono' : channels === 2 ? 'stereo' : `${channels}c`;
}

const PLAYERS: Record<PlayerName, PlayerSpec> = {
  ffplay: {
    args: (pcm) => ['-hide_banner', '-loglevel', 'error', '-nodisp', '-autoexit',
      '-f', 's16le', '-ar', String(pcm.sampleRate), '-ch_layout', channelLayout(pcm.channels), '-i', '-'],
    noDevice: /audio open failed|could not open audio|no such audio device|Could not initialize SDL|Failed to open file/i,
  },
  aplay: {
    args: (pcm) => ['-q', '-t', 'raw', '-f', 'S16_LE', '-r', String(pcm.sampleRate), '-c', String(pcm.channels), '-'],
    noDevice: /audio open error|cannot open|no such device|unknown pcm/i,
  },
  paplay: {
    args: (pcm) => ['--raw', '--format=s16le', `--rate=${pcm.sampleRate}`, `--channels=${pcm.channels}`],
    noDevice: /connection (refused|failure)|failed to connect|no such entity/i,
  },
};

export interface ExternalPlayerOptions extends SinkOptions {
  /** Player to run; default the first available of `PLAYER_ORDER`. */
  player?: PlayerName;
  /** Clock the played position follows; default the system clock. */
  clock?: Clock;
}

/** Plays s16le PCM through an external player process. */
export class ExternalPlayerSink extends ProcessSink implements PlayedPosition {
  readonly kind = SinkKind.externalPlayer;
  private readonly head: PlayHead;

  constructor(
    readonly player: PlayerName,
    readonly pcm: PcmInfo,
    options: SinkOptions & { clock?: Clock } = {},
  ) {
    const command = findOnPath(player);
    if (!command) throw new UnavailableError(`${player} is not installed (not found on PATH)`);
    const child = spawn(command, PLAYERS[player].args(pcm), { stdio: ['pipe', 'ignore', 'pipe'], windowsHide: true });
    super(child, { ...options, label: player, failurePattern: PLAYERS[player].noDevice });
    this.head = new PlayHead(pcm, options.clock);
  }

  /** Bytes played so far, by the clock from the first write (the player does not say). */
  get playedBytes(): number {
    return this.head.playedBytes;
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.head.wrote(chunk.length);
    super._write(chunk, encoding, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.head.stop();
    super._destroy(error, callback);
  }

  protected override makeError(message: string, cause?: unknown): VoxpipeError {
    if (PLAYERS[this.player].noDevice.test(this.stderr)) {
      return new UnavailableError(`${this.player} could not open an audio device: ${message}`, cause === undefined ? {} : { cause });
    }
    return super.makeError(message, cause);
  }

  protected result(): SinkResult {
    return { kind: this.kind, bytesIn: this.bytesIn, player: this.player, pcm: this.pcm };
  }
}

/** Whether a player can be used, and why not. */
export interface PlayerProbe {
  player: PlayerName;
  available: boolean;
  /** Why it cannot be used, when it cannot. */
  reason?: string;
}

export interface ProbePlayerOptions {
  /** Give up on a player that has not finished 20 ms of silence by then; default 5000 ms. */
  timeoutMs?: number;
  /** Probe again instead of using the answer cached for this process; default false. */
  refresh?: boolean;
}

const PROBE_PCM: PcmInfo = { sampleRate: 48_000, channels: 1, bitDepth: 16 };
const PROBE_SILENCE_MS = 20;
const probeCache = new Map<PlayerName, Promise<PlayerProbe>>();

/** Check one player: on PATH, and able to play 20 ms of silence. Cached per process. */
export function probePlayer(player: PlayerName, options: ProbePlayerOptions = {}): Promise<PlayerProbe> {
  const cached = probeCache.get(player);
  if (cached && !options.refresh) return cached;
  const probe = runProbe(player, options.timeoutMs ?? 5_000); // ms
  probeCache.set(player, probe);
  return probe;
}

async function runProbe(player: PlayerName, timeoutMs: number): Promise<PlayerProbe> {
  if (!findOnPath(player)) return { player, available: false, reason: `${player} not found on PATH` };
  const silence = Buffer.alloc(Math.round((PROBE_PCM.sampleRate * PROBE_SILENCE_MS) / 1000) * frameBytes(PROBE_PCM));
  let sink: ExternalPlayerSink;
  try {
    sink = new ExternalPlayerSink(player, PROBE_PCM);
  } catch (error) {
    return { player, available: false, reason: (error as Error).message };
  }
  const timer = setTimeout(() => sink.destroy(new UnavailableError(`${player} did not finish within ${timeoutMs} ms`)), timeoutMs);
  try {
    sink.end(silence);
    await sink.done;
    return { player, available: true };
  } catch (error) {
    return { player, available: false, reason: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The first player of `players` that can play here, or undefined with every
 * reason collected in `probes`.
 * @param players candidates in order; default `PLAYER_ORDER`
 */
export async function findExternalPlayer(
  players: readonly PlayerName[] = PLAYER_ORDER,
  options: ProbePlayerOptions = {},
): Promise<{ player: PlayerName | undefined; probes: PlayerProbe[] }> {
  const probes: PlayerProbe[] = [];
  for (const player of players) {
    const probe = await probePlayer(player, options);
    probes.push(probe);
    if (probe.available) return { player, probes };
  }
  return { player: undefined, probes };
}

/** Whether any external player can play here. */
export async function externalPlayerAvailable(options: ProbePlayerOptions = {}): Promise<boolean> {
  return (await findExternalPlayer(PLAYER_ORDER, options)).player !== undefined;
}

/**
 * Start an external player for `pcm`.
 * @throws UnavailableError when no player is installed or none can open a device
 */
export async function openExternalPlayer(pcm: PcmInfo, options: ExternalPlayerOptions & ProbePlayerOptions = {}): Promise<ExternalPlayerSink> {
  const { player, probes } = await findExternalPlayer(options.player ? [options.player] : PLAYER_ORDER, options);
  if (!player) {
    throw new UnavailableError(`no external player can play audio here (${probes.map((p) => p.reason ?? p.player).join('; ')})`);
  }
  return new ExternalPlayerSink(player, pcm, {
    ...(options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
}
