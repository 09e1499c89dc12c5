/**
 * The local video engine: the prompt's pattern (pattern.ts) animated over
 * time, rendered frame by frame in JavaScript and encoded to MP4 by ffmpeg
 * (H.264 with libx264 when ffmpeg has it, else ffmpeg's own MPEG-4 part 2).
 * A start or end frame, when given, is blended in and fades out (in). A
 * stand-in for a generative video model: a real, playable file derived from
 * the request.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { patternParams, renderParams } from './pattern.js';
import type { RgbImage } from './png.js';
import { MEDIA_PROCESS_LIMITER, runProcess, withTempDir, writeWithBackpressure } from './process.js';

/** Frame rate of generated videos. */
export const VIDEO_FPS = 24;

const encoderArgs = new Map<string, Promise<string[]>>();

/**
 * Video encoder arguments for this ffmpeg: libx264 (plays everywhere) when
 * built in, else the native mpeg4 encoder every ffmpeg has. Probed once per binary.
 */
export function videoEncoderArgs(ffmpeg: string): Promise<string[]> {
  let args = encoderArgs.get(ffmpeg);
  if (!args) {
    args = runProcess(ffmpeg, ['-hide_banner', '-encoders'], { timeoutMs: 15_000 }).then( // 15 s
      ({ stdout }) => (/\blibx264\b/.test(stdout.toString('utf8')) ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'] : ['-c:v', 'mpeg4', '-q:v', '4', '-pix_fmt', 'yuv420p']),
      () => ['-c:v', 'mpeg4', '-q:v', '4', '-pix_fmt', 'yuv420p'],
    );
    encoderArgs.set(ffmpeg, args);
  }
  return args;
}

export interface GenerateVideoOptions {
  ffmpeg: string;
  prompt: string;
  /** Even numbers. */
  width: number;
  height: number;
  seconds: number;
  /** Blended into the first frames, fading out over the first half. */
  startFrame?: RgbImage | undefined;
  /** Blended into the last frames, fading in over the second half. */
  endFrame?: RgbImage | undefined;
  signal?: AbortSignal | undefined;
}

/** Generate an MP4 of the prompt's animated pattern. */
export function generateVideo(options: GenerateVideoOptions): Promise<Buffer> {
  const { ffmpeg, width, height, seconds } = options;
  const frames = Math.max(1, Math.round(seconds * VIDEO_FPS));
  const params = patternParams(options.prompt);
  return MEDIA_PROCESS_LIMITER.run(() =>
    withTempDir(async (dir) => {
      const out = join(dir, 'video.mp4');
      const encoder = await videoEncoderArgs(ffmpeg);
      const args = ['-v', 'error', '-nostdin', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, '-r', String(VIDEO_FPS), '-i', 'pipe:0', ...encoder, '-movflags', '+faststart', '-f', 'mp4', out];
      await runProcess(ffmpeg, args, {
        timeoutMs: 300_000, // 5 min
        signal: options.signal,
        input: async (stdin) => {
          for (let i = 0; i < frames; i++) {
            if (options.signal?.aborted) throw new Error('aborted');
            const t = i / VIDEO_FPS;
            const progress = frames === 1 ? 0 : i / (frames - 1);
            const fadeOut = Math.max(0, 1 - 2 * progress);
            const fadeIn = Math.max(0, 2 * progress - 1);
            const base = options.startFrame && fadeOut > 0 ? options.startFrame : options.endFrame && fadeIn > 0 ? options.endFrame : undefined;
            const weight = base === options.startFrame ? 0.8 * fadeOut : 0.8 * fadeIn;
            const frame = renderParams(params, width, height, { timeSeconds: t, ...(base ? { base, baseWeight: weight } : {}) });
            await writeWithBackpressure(stdin, frame.pixels);
            // Rendering is synchronous JavaScript: let other requests in between frames.
            await yieldToLoop();
          }
        },
      });
      return readFile(out);
    }),
  );
}
