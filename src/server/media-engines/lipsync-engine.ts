/**
 * The local lip-sync engine: an MP4 whose audio track is the given audio and
 * whose picture is the source video (looped when shorter than the audio) or
 * a still image held for the audio's length, with the audio's waveform drawn
 * in a band at the bottom so the picture visibly follows the sound. Muxed by
 * ffmpeg. A stand-in for a lip-sync model: no mouth is animated.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MediaProbe } from './probe.js';
import { MEDIA_PROCESS_LIMITER, runProcess, withTempDir } from './process.js';
import { videoEncoderArgs } from './video-engine.js';

/** Frame rate of lip-sync results. */
export const LIPSYNC_FPS = 25;
/** Longest side of a lip-sync result, pixels (larger sources are scaled down). */
export const LIPSYNC_MAX_SIDE = 1280;

/** Output size for a source picture: at most LIPSYNC_MAX_SIDE on the long side, even numbers. */
export function outputSize(width: number, height: number, maxSide = LIPSYNC_MAX_SIDE): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  const even = (n: number) => Math.max(2, 2 * Math.round((n * scale) / 2));
  return { width: even(width), height: even(height) };
}

export interface LipSyncInput {
  ffmpeg: string;
  /** Source video or still image bytes, and what ffprobe saw in them. */
  visual: Buffer;
  visualProbe: MediaProbe;
  /** True: a still image held for the whole audio. */
  still: boolean;
  audio: Buffer;
  /** Length of the result: the audio's duration, or less. */
  durationSeconds: number;
  signal?: AbortSignal | undefined;
}

export interface LipSyncOutput {
  mp4: Buffer;
  width: number;
  height: number;
}

/** Make the lip-sync result. */
export function lipSync(input: LipSyncInput): Promise<LipSyncOutput> {
  const source = input.visualProbe.video;
  if (!source) return Promise.reject(new Error('the visual input has no picture'));
  const { width, height } = outputSize(source.width, source.height);
  const band = Math.max(2, 2 * Math.round(height / 10));
  return MEDIA_PROCESS_LIMITER.run(() =>
    withTempDir(async (dir) => {
      const visual = join(dir, 'visual');
      const audio = join(dir, 'audio');
      const out = join(dir, 'lipsync.mp4');
      await writeFile(visual, input.visual);
      await writeFile(audio, input.audio);
      const visualInput = input.still ? ['-loop', '1', '-framerate', String(LIPSYNC_FPS), '-i', visual] : ['-stream_loop', '-1', '-i', visual];
      const graph = [
        `[0:v]fps=${LIPSYNC_FPS},scale=${width}:${height},setsar=1[bg]`,
        '[1:a]asplit=2[forwaves][out_a]',
        `[forwaves]showwaves=s=${width}x${band}:mode=cline:rate=${LIPSYNC_FPS}:colors=white,format=rgba,colorchannelmixer=aa=0.75[waves]`,
        `[bg][waves]overlay=0:${height - band}:shortest=1,format=yuv420p[out_v]`,
      ].join(';');
      const encoder = await videoEncoderArgs(input.ffmpeg);
      const args = [
        '-v', 'error', '-nostdin',
        ...visualInput,
        '-i', audio,
        '-filter_complex', graph,
        '-map', '[out_v]', '-map', '[out_a]',
        ...encoder,
        '-c:a', 'aac', '-b:a', '128k',
        '-t', input.durationSeconds.toFixed(3),
        '-movflags', '+faststart', '-f', 'mp4', out,
      ];
      await runProcess(input.ffmpeg, args, { timeoutMs: 600_000, signal: input.signal }); // 10 min
      return { mp4: await readFile(out), width, height };
    }),
  );
}
