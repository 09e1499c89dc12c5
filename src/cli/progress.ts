/**
 * Progress of a long `say` on standard error, measured in audio: seconds
 * received (and, on the speakers, played) against an estimate of the whole,
 * with an ETA. Text is handed to the service at once, so the text sent says
 * nothing about how far the run is; the audio does.
 *
 * The estimate: the completed segments give seconds of audio per character
 * of text, and the whole text's length times that is the total. The ETA is
 * what is left of it over the rate audio arrives at (a file), or over real
 * time when it plays (the speakers), whichever is later.
 */
import { performance } from 'node:perf_hooks';
import { numberOption } from './args.js';
import type { Io } from './io.js';

/** What the run has done so far. */
export interface ProgressSample {
  /** Segments completed. */
  segments: number;
  /** Requests used so far (a long text goes on several). */
  parts: number;
  /** Seconds of audio received, where the format says it (pcm, wav). */
  receivedS: number | undefined;
  /** Characters (units) of the completed segments, and their seconds of audio (undefined where the format does not say). */
  doneUnits: number;
  doneS: number | undefined;
  /** The audio plays on the speakers in real time (else it is written as it comes). */
  playing: boolean;
}

/** Seconds since the first audio arrived (undefined before it). */
export interface ProgressClock {
  sinceFirstAudioS: number | undefined;
}

/**
 * One progress line (without `voxpipe: `): received, played, the estimated
 * total and the ETA where they can be told.
 *
 * @param totalChars the text's length; undefined for `speak` (its text is still coming: no total, no ETA)
 */
export function progressLine(p: ProgressSample, clock: ProgressClock, totalChars: number | undefined): string {
  const parts = [`${p.segments} segments`];
  if (p.parts > 1) parts.push(`request ${p.parts}`);
  if (p.receivedS === undefined) {
    // mp3, opus: no seconds from the bytes; the text spoken is what can be told.
    if (totalChars !== undefined && totalChars > 0) parts.push(`${Math.min(100, Math.round((100 * p.doneUnits) / totalChars))} % of the text spoken`);
    return parts.join(', ');
  }
  const playedS = p.playing && clock.sinceFirstAudioS !== undefined ? Math.min(p.receivedS, clock.sinceFirstAudioS) : undefined;
  parts.push(`${p.receivedS.toFixed(0)} s of audio received${playedS !== undefined ? `, ${playedS.toFixed(0)} s played` : ''}`);
  if (totalChars === undefined || p.doneS === undefined || p.doneUnits === 0) return parts.join(', ');
  const totalS = Math.max(p.receivedS, (p.doneS * totalChars) / p.doneUnits);
  const left = totalS - p.receivedS;
  // Audio arrives at this many seconds of audio a second (since its first byte).
  const rate = clock.sinceFirstAudioS !== undefined && clock.sinceFirstAudioS > 0 ? p.receivedS / clock.sinceFirstAudioS : undefined;
  const fetchEta = rate !== undefined && rate > 0 ? left / rate : undefined;
  const playEta = playedS !== undefined ? totalS - playedS : undefined;
  const eta = Math.max(fetchEta ?? 0, playEta ?? 0);
  parts.push(`of about ${totalS.toFixed(0)} s, ETA ${fetchEta === undefined && playEta === undefined ? '?' : `${Math.ceil(eta)} s`}`);
  return parts.join(', ');
}

/** Off a terminal, a progress line this often (`VOXPIPE_PROGRESS_MS` changes it, for tests). */
const PROGRESS_EVERY_MS = 5_000;

/**
 * On a terminal one line redrawn every 0.5 s; off one a line every 5 s;
 * nothing for a run shorter than that.
 */
export function startProgress(io: Io, read: () => ProgressSample & { firstAudioAt: number | undefined }, totalChars: number | undefined): { stop(): void } {
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
  let drawn = false;
  const line = (): string => {
    const sample = read();
    const now = performance.now();
    const clock = { sinceFirstAudioS: sample.firstAudioAt === undefined ? undefined : (now - sample.firstAudioAt) / 1000 };
    return `voxpipe: ${progressLine(sample, clock, totalChars)}`;
  };
  const timer = setInterval(
    () => {
      if (tty) io.stderr.write(`\r${line()}\x1b[K`);
      else io.stderr.write(`${line()}\n`);
      drawn = true;
    },
    tty ? 500 : (numberOption(io.env['VOXPIPE_PROGRESS_MS'], 'VOXPIPE_PROGRESS_MS', 10) ?? PROGRESS_EVERY_MS),
  );
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      if (tty && drawn) io.stderr.write('\r\x1b[K');
    },
  };
}
