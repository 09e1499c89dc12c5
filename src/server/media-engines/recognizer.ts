/**
 * Offline speech recognition with the system's pocketsphinx (Debian packages
 * `pocketsphinx` and `pocketsphinx-en-us`): 16 kHz mono PCM in, a transcript
 * out. The 5prealpha CLI (`pocketsphinx_continuous -infile`) prints one
 * hypothesis line per utterance; the 5.x CLI (`pocketsphinx single`) prints
 * one JSON object per utterance with the text in `t`. Silence gives no
 * utterance, so an empty transcript.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeAudio, toPcm16, type DecodeOptions } from '../audio/decode.js';
import { buildWavHeader } from '../../protocol/wav.js';
import { MEDIA_PROCESS_LIMITER, runProcess, withTempDir } from './process.js';
import { RecognizerKind, type RecognizerTool } from './tools.js';

/** Sample rate the recognizer works at. */
export const RECOGNIZER_SAMPLE_RATE = 16_000;

/** Speech as the recognizer takes it: 16 kHz mono s16le. */
export interface RecognizerAudio {
  pcm: Buffer;
  durationSeconds: number;
}

/** Any audio input through the server's one decoding pipeline, at the recognizer's rate. Throws UnprocessableMediaError. */
export async function decodeForRecognizer(data: Buffer, options: DecodeOptions = {}): Promise<RecognizerAudio> {
  const audio = await decodeAudio(data, options);
  return { pcm: toPcm16(audio, RECOGNIZER_SAMPLE_RATE), durationSeconds: audio.samples.length / audio.sampleRate };
}

export interface RecognizeOptions {
  signal?: AbortSignal | undefined;
  /** Default 600_000 ms (10 min): pocketsphinx runs at about 0.5x real time on one core. */
  timeoutMs?: number;
}

/** Collapse whitespace; pocketsphinx fillers such as `<sil>` or `[noise]` are dropped. */
export function cleanTranscript(text: string): string {
  return text
    .replace(/<[^>]*>|\[[^\]]*\]|\(\d+\)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Turn the recognizer's standard output into one transcript. */
export function parseRecognizerOutput(kind: RecognizerKind, stdout: string): string {
  const lines = stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (kind === RecognizerKind.single) {
    const texts = lines.map((line) => {
      try {
        const t = (JSON.parse(line) as { t?: unknown }).t;
        return typeof t === 'string' ? t : '';
      } catch {
        return '';
      }
    });
    return cleanTranscript(texts.join(' '));
  }
  // 5prealpha may prefix an utterance id ("000000000: words") in some modes.
  return cleanTranscript(lines.map((l) => l.replace(/^\d{9}:\s*/, '')).join(' '));
}

/** Recognize `pcm` (s16le, mono, 16 kHz). Runs at most a few recognizers at once. */
export function recognize(tool: RecognizerTool, pcm: Buffer, options: RecognizeOptions = {}): Promise<string> {
  if (pcm.length < 2) return Promise.resolve('');
  return MEDIA_PROCESS_LIMITER.run(() =>
    withTempDir(async (dir) => {
      const path = join(dir, 'audio.wav');
      await writeFile(path, Buffer.concat([buildWavHeader({ sampleRate: RECOGNIZER_SAMPLE_RATE, channels: 1, bitDepth: 16 }, pcm.length), pcm]));
      // Both flavours load their default English model; only the 5prealpha one needs its log silenced.
      const args = tool.kind === RecognizerKind.single ? ['single', path] : ['-infile', path, '-logfn', '/dev/null'];
      const { stdout } = await runProcess(tool.path, args, { timeoutMs: options.timeoutMs ?? 600_000, signal: options.signal }); // 10 min
      return parseRecognizerOutput(tool.kind, stdout.toString('utf8'));
    }),
  );
}
