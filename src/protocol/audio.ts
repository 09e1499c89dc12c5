/**
 * Audio formats and PCM metadata shared by the client, the sinks and the
 * reference server.
 *
 * Wire conventions (decided here, since the spec leaves them open):
 * - `pcm`: signed 16-bit little-endian, interleaved; `sample_rate`,
 *   `channels` and `bit_depth` travel in `ready` and every `audio` event.
 * - `wav`: the first `audio` frame of a request begins with a 44-byte
 *   streaming WAV header whose RIFF and data sizes are 0xFFFFFFFF; every later
 *   frame is raw PCM. Concatenating frames in sequence order gives a playable
 *   WAV stream; a file sink patches the sizes when it closes.
 * - `mp3`: MPEG-1/2 Layer III frames; each segment ends on a frame boundary,
 *   so concatenation is a valid mp3 stream.
 * - `opus`: one Ogg Opus logical stream per request; each segment ends on an
 *   Ogg page boundary.
 */
export const AudioFormat = {
  pcm: 'pcm',
  wav: 'wav',
  mp3: 'mp3',
  opus: 'opus',
} as const;
export type AudioFormat = (typeof AudioFormat)[keyof typeof AudioFormat];
/** Pure (an annotation for bundlers): a bundle that never reads it, the browser's, leaves it and `AudioFormat` out. */
export const AUDIO_FORMATS: readonly AudioFormat[] = /* @__PURE__ */ Object.values(AudioFormat);

export function isAudioFormat(value: unknown): value is AudioFormat {
  return typeof value === 'string' && (AUDIO_FORMATS as readonly string[]).includes(value);
}

/** PCM layout of decoded audio. */
export interface PcmInfo {
  /** Samples per second per channel, e.g. 24_000. */
  sampleRate: number;
  /** Interleaved channels; 1 for every engine of the reference server. */
  channels: number;
  /** Bits per sample; always 16 (signed little-endian). */
  bitDepth: number;
}

/** Bytes in one sample frame (all channels of one sample instant). */
export function frameBytes(info: PcmInfo): number {
  return (info.bitDepth / 8) * info.channels;
}

/** Milliseconds of audio in `bytes` of PCM. */
export function pcmDurationMs(bytes: number, info: PcmInfo): number {
  return (bytes / frameBytes(info) / info.sampleRate) * 1000;
}

/** MIME type of each format, as the HTTP routes send it. */
export const AUDIO_CONTENT_TYPE: Record<AudioFormat, string> = {
  pcm: 'audio/pcm',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
};

/**
 * One chunk of audio in sequence order, as `SpeechStream.chunks()` yields it
 * (what the listener gets). A transport hands its audio over as a
 * `TransportAudio` (`transport.ts`): this plus the attempt and offset tags
 * the stream's one ledger needs.
 */
export interface AudioChunk extends PcmInfo {
  /** Encoded audio bytes in `format` (PCM when format is `pcm`). */
  data: Buffer;
  /** Reliable-mode segment id, or the server-generated one in simple mode. */
  segmentId: string;
  /** Server `audio.sequence`, strictly increasing within a request. */
  sequence: number;
  format: AudioFormat;
}
