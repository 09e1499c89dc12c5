/**
 * The TTS job worker on the generic task runner: the text is split into
 * segments (sentences, at most 500 characters each), each synthesized and
 * stored as its own playable file, then the audio of the segments that
 * succeeded is encoded as the final file. All segments fail: the task fails
 * and is refunded. Some fail: `partial` (envelope `partial_fail`), charged
 * only for the characters delivered.
 */
import type { AudioFormat } from '../../../protocol/audio.js';
import { countChars, LIMITS, splitByChars } from '../../../protocol/limits.js';
import type { ServerContext } from '../../context.js';
import { ApiErrorCode } from '../../http/errors.js';
import type { AudioStore } from '../common/audio-store.js';
import { textFingerprint } from '../common/fingerprint.js';
import { encodeFile, synthesizeFile, SynthesisError, type EngineVoiceParams } from '../common/synthesize.js';
import { TaskFailure, TaskRunner, type Task, type TaskOutcome } from '../common/task-runner.js';

/** Largest segment of a job, in characters. */
export const JOB_SEGMENT_MAX_CHARS = 500;

/** What a TTS job was asked for (stored with the task; the text stays server side). */
export interface TtsJobInput {
  text: string;
  characters: number;
  textPreview: string;
  textFingerprint: string;
  voiceId: string;
  engineModelId: string;
  format: AudioFormat;
  speed: number;
  emotion: string | null;
  engineVoice: EngineVoiceParams;
  /** Segment texts, in order. */
  segments: string[];
}

export const SegmentStatus = { pending: 'pending', processing: 'processing', success: 'success', fail: 'fail' } as const;
export type SegmentStatus = (typeof SegmentStatus)[keyof typeof SegmentStatus];

export interface TtsSegmentResult {
  index: number;
  characters: number;
  status: SegmentStatus;
  audioId: string | null;
  errorCode: string | null;
}

export interface TtsJobResult {
  segments: TtsSegmentResult[];
  /** Final audio (success and partial). */
  audioId: string | null;
}

export type TtsTask = Task<TtsJobInput, TtsJobResult>;

/**
 * Split a job's text into segments: sentences (ending in . ! ? or CJK
 * equivalents, followed by space), each cut to at most `maxChars`. Joining
 * the segments gives the text back.
 */
export function splitJobText(text: string, maxChars = JOB_SEGMENT_MAX_CHARS): string[] {
  const sentences: string[] = [];
  let start = 0;
  for (const m of text.matchAll(/[.!?。！？]+\s+/gu)) {
    const end = m.index + m[0].length;
    if (end < text.length) {
      sentences.push(text.slice(start, end));
      start = end;
    }
  }
  sentences.push(text.slice(start));
  return sentences.flatMap((s) => splitByChars(s, maxChars));
}

/** First characters of `text` (at most 80 code points), never the full text beyond that. */
export function textPreviewOf(text: string): string {
  return splitByChars(text, LIMITS.textPreviewMaxChars)[0] ?? '';
}

/** The input record of a job from its resolved parameters. */
export function jobInput(fields: Omit<TtsJobInput, 'characters' | 'textPreview' | 'textFingerprint' | 'segments'>): TtsJobInput {
  return {
    ...fields,
    characters: countChars(fields.text),
    textPreview: textPreviewOf(fields.text),
    textFingerprint: textFingerprint(fields.text),
    segments: splitJobText(fields.text),
  };
}

/** The TTS task runner of a server (type `tts`). */
export function createTtsRunner(ctx: ServerContext, audio: AudioStore): TaskRunner<TtsJobInput, TtsJobResult> {
  return new TaskRunner<TtsJobInput, TtsJobResult>(ctx, {
    type: 'tts',
    idPrefix: 'tts',
    async worker({ task, account, signal, progress }): Promise<TaskOutcome<TtsJobResult>> {
      const input = task.input;
      const segments: TtsSegmentResult[] = input.segments.map((s, index) => ({ index, characters: countChars(s), status: SegmentStatus.pending, audioId: null, errorCode: null }));
      // Segment files, and their PCM where the final file is re-encoded from it.
      const files: Buffer[] = [];
      const pcms: Buffer[] = [];
      progress({ segments, audioId: null });
      for (const [index, text] of input.segments.entries()) {
        const seg = segments[index]!;
        seg.status = SegmentStatus.processing;
        progress({ segments, audioId: null });
        try {
          const out = await synthesizeFile(ctx, text, input.format, { voice: input.engineVoice, speed: input.speed, signal });
          const file = audio.put(account.userId, input.format, out.file, `${task.taskId}-segment-${index}`);
          files.push(out.file);
          if (input.format !== 'mp3') pcms.push(out.pcm);
          Object.assign(seg, { status: SegmentStatus.success, audioId: file.id });
        } catch (err) {
          if (!(err instanceof SynthesisError)) throw err;
          Object.assign(seg, { status: SegmentStatus.fail, errorCode: ApiErrorCode.generationFailed });
        }
        progress({ segments, audioId: null });
      }
      const delivered = segments.filter((s) => s.status === SegmentStatus.success);
      if (delivered.length === 0) throw new TaskFailure(ApiErrorCode.generationFailed, 'speech generation failed for every segment; the credits were refunded');
      let finalFile: Buffer;
      try {
        // Each mp3 segment file is a complete LAME stream ending on a frame boundary,
        // so their concatenation is the final file; other formats re-encode the PCM.
        finalFile = input.format === 'mp3' ? Buffer.concat(files) : await encodeFile(ctx, input.format, Buffer.concat(pcms));
      } catch (err) {
        throw new TaskFailure(ApiErrorCode.generationFailed, (err as Error).message);
      }
      const final = audio.put(account.userId, input.format, finalFile, task.taskId);
      const result: TtsJobResult = { segments, audioId: final.id };
      if (delivered.length === segments.length) return { result };
      const failed = segments.length - delivered.length;
      return {
        result,
        partial: {
          errorCode: ApiErrorCode.generationFailed,
          errorMessage: `${failed} of ${segments.length} segments failed; the final audio holds the others and only their characters are charged`,
          keepAmount: delivered.reduce((sum, s) => sum + s.characters, 0),
        },
      };
    },
  });
}
