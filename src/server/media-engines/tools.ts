/**
 * Which media tools this machine has. Capabilities follow from them: speech
 * recognition needs a recognizer (Debian's pocketsphinx with its en-us
 * model), video and lip-sync need ffmpeg and ffprobe; images need nothing.
 * Detection is a PATH lookup, done once per process. Tests (and embedders)
 * can replace the tools of one server with `setMediaTools`.
 */
import { existsSync } from 'node:fs';
import { findExecutable } from './process.js';

/** Recognizer command-line flavours. */
export const RecognizerKind = {
  /** pocketsphinx 0.8 / 5prealpha (Debian bookworm): `pocketsphinx_continuous -infile FILE` prints one hypothesis per utterance. */
  continuous: 'pocketsphinx_continuous',
  /** pocketsphinx 5.x: `pocketsphinx single FILE` prints one JSON object per utterance (`t`: text). */
  single: 'pocketsphinx',
} as const;
export type RecognizerKind = (typeof RecognizerKind)[keyof typeof RecognizerKind];

export interface RecognizerTool {
  kind: RecognizerKind;
  path: string;
}

export interface MediaTools {
  ffmpeg: string | undefined;
  ffprobe: string | undefined;
  recognizer: RecognizerTool | undefined;
}

/** Where Debian's pocketsphinx-en-us puts the acoustic model the 5prealpha binary loads by default. */
const KNOWN_MODEL_DIRS = ['/usr/share/pocketsphinx/model/en-us/en-us', '/usr/local/share/pocketsphinx/model/en-us/en-us'];

/**
 * Find the recognizer on PATH, preferring the 5prealpha `pocketsphinx_continuous`
 * (only with its separately packaged English model installed); 5.x bundles its model.
 */
export function detectRecognizer(path?: string, modelDirs: readonly string[] = KNOWN_MODEL_DIRS): RecognizerTool | undefined {
  const continuous = findExecutable(RecognizerKind.continuous, path);
  if (continuous && modelDirs.some((d) => existsSync(d))) return { kind: RecognizerKind.continuous, path: continuous };
  const single = findExecutable(RecognizerKind.single, path);
  if (single) return { kind: RecognizerKind.single, path: single };
  return undefined;
}

/** Look the tools up on PATH (uncached). */
export function detectMediaTools(path?: string): MediaTools {
  return { ffmpeg: findExecutable('ffmpeg', path), ffprobe: findExecutable('ffprobe', path), recognizer: detectRecognizer(path) };
}

let detected: MediaTools | undefined;
const overrides = new WeakMap<object, MediaTools>();

/** The tools of a server (`owner` is its context): an override set for it, else what PATH has (cached). */
export function mediaToolsOf(owner: object): MediaTools {
  return overrides.get(owner) ?? (detected ??= detectMediaTools());
}

/** Replace the tools one server sees, e.g. `{ ...mediaToolsOf(ctx), ffmpeg: undefined }` to test the unavailable path. */
export function setMediaTools(owner: object, tools: MediaTools): void {
  overrides.set(owner, tools);
}

/** Whether ffmpeg and ffprobe are both there (video and lip-sync need both). */
export function hasFfmpeg(tools: MediaTools): tools is MediaTools & { ffmpeg: string; ffprobe: string } {
  return tools.ffmpeg !== undefined && tools.ffprobe !== undefined;
}
