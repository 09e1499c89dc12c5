/**
 * What a media file holds, read by ffprobe: streams, duration, picture size.
 * Lip-sync uses it to refuse reachable but unprocessable inputs (spec 4.7:
 * 422) before accepting a job, and to size its output.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess, withTempDir } from './process.js';

export interface MediaProbe {
  /** ffprobe's format name, e.g. `wav`, `mov,mp4,m4a,3gp,3g2,mj2`, `png_pipe`. */
  formatName: string;
  /** Seconds; undefined for a still image. */
  durationSeconds: number | undefined;
  audio: { codec: string; sampleRate: number; channels: number } | undefined;
  /** First video (or picture) stream. */
  video: { codec: string; width: number; height: number } | undefined;
}

/** Codecs ffprobe reports for still pictures (an "image" is a one-frame video stream of one of these). */
export const STILL_IMAGE_CODECS = ['png', 'mjpeg', 'jpegls', 'webp', 'gif', 'bmp', 'tiff', 'jpeg2000'] as const;

interface FfprobeJson {
  streams?: { codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; width?: number; height?: number; duration?: string; disposition?: { attached_pic?: number } }[];
  format?: { format_name?: string; duration?: string };
}

function seconds(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Read ffprobe's JSON of `path`. Throws ProcessError when ffprobe cannot read the file. */
export async function probeFile(ffprobe: string, path: string, signal?: AbortSignal): Promise<MediaProbe> {
  const { stdout } = await runProcess(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], { timeoutMs: 30_000, signal }); // 30 s
  const json = JSON.parse(stdout.toString('utf8')) as FfprobeJson;
  const streams = json.streams ?? [];
  const a = streams.find((s) => s.codec_type === 'audio');
  const v = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic) ?? streams.find((s) => s.codec_type === 'video');
  return {
    formatName: json.format?.format_name ?? '',
    durationSeconds: seconds(json.format?.duration) ?? seconds(a?.duration),
    audio: a ? { codec: a.codec_name ?? '', sampleRate: Number(a.sample_rate) || 0, channels: a.channels ?? 0 } : undefined,
    video: v && v.width && v.height ? { codec: v.codec_name ?? '', width: v.width, height: v.height } : undefined,
  };
}

/** Probe bytes (written to a temporary file: mp4 needs a seekable input). */
export function probeBytes(ffprobe: string, data: Buffer, signal?: AbortSignal): Promise<MediaProbe> {
  return withTempDir(async (dir) => {
    const path = join(dir, 'input');
    await writeFile(path, data);
    return probeFile(ffprobe, path, signal);
  });
}

/** Whether a probe describes a still picture rather than a moving video. */
export function isStillImage(probe: MediaProbe): boolean {
  if (!probe.video) return false;
  return (STILL_IMAGE_CODECS as readonly string[]).includes(probe.video.codec) || probe.formatName.endsWith('_pipe') || probe.formatName === 'image2';
}
