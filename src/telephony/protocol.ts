/**
 * The media-stream WebSocket protocol of a telephony provider (Twilio's
 * Media Streams, bidirectional `<Connect><Stream>`; Telnyx and others speak
 * the same JSON): text frames, each a JSON object with an `event`.
 *
 * From the provider: `connected`, then `start` (the stream's sid and media
 * format), then `media` (base64 audio of the caller, 20 ms frames), `dtmf`,
 * `mark` (a mark we sent, echoed when playback reached it) and finally `stop`.
 * To the provider: `media` (base64 audio to play), `mark` (echo this name when
 * the audio before it has played) and `clear` (drop the audio buffered for
 * playback: barge-in).
 *
 * Pure: parsing and building only.
 */

/** Samples per second of telephone audio. */
export const TELEPHONY_SAMPLE_RATE = 8_000;
/** One media frame: 20 ms of 8 kHz G.711, one byte per sample. */
export const FRAME_MS = 20;
export const FRAME_BYTES = (TELEPHONY_SAMPLE_RATE * FRAME_MS) / 1000; // 160

/** Media encodings a stream's `start.mediaFormat.encoding` may name. */
export const MediaEncoding = {
  mulaw: 'audio/x-mulaw',
  alaw: 'audio/x-alaw',
} as const;
export type MediaEncoding = (typeof MediaEncoding)[keyof typeof MediaEncoding];

export interface MediaFormat {
  encoding: string;
  sampleRate: number;
  channels: number;
}

export interface StartInfo {
  streamSid: string;
  accountSid?: string;
  callSid?: string;
  tracks?: string[];
  customParameters?: Record<string, string>;
  mediaFormat: MediaFormat;
}

/** A message from the provider, validated. */
export type InboundMessage =
  | { event: 'connected'; protocol?: string; version?: string }
  | { event: 'start'; sequenceNumber?: string; streamSid: string; start: StartInfo }
  | { event: 'media'; sequenceNumber?: string; streamSid: string; media: { track?: string; chunk?: string; timestamp?: string; payload: string } }
  | { event: 'mark'; sequenceNumber?: string; streamSid: string; mark: { name: string } }
  | { event: 'dtmf'; sequenceNumber?: string; streamSid: string; dtmf: { track?: string; digit: string } }
  | { event: 'stop'; sequenceNumber?: string; streamSid: string; stop?: { accountSid?: string; callSid?: string } };

/** A message to the provider. */
export type OutboundMessage =
  | { event: 'media'; streamSid: string; media: { payload: string } }
  | { event: 'mark'; streamSid: string; mark: { name: string } }
  | { event: 'clear'; streamSid: string };

/** Why a frame was not a message of the protocol. */
export class MediaStreamMessageError extends Error {
  override name = 'MediaStreamMessageError';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new MediaStreamMessageError(`${where}.${key} must be a string`);
  return v;
}

function obj(o: Record<string, unknown>, key: string, where: string): Record<string, unknown> {
  const v = o[key];
  if (!isObject(v)) throw new MediaStreamMessageError(`${where}.${key} must be an object`);
  return v;
}

/** Copy the optional string fields present. */
function optional<K extends string>(o: Record<string, unknown>, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) if (typeof o[k] === 'string') out[k] = o[k];
  return out;
}

/**
 * Parse one text frame from the provider. Unknown events return `undefined`
 * (the protocol grows; they are skipped); a known event with a missing or
 * mistyped field throws a `MediaStreamMessageError` naming the field.
 */
export function parseInbound(text: string): InboundMessage | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new MediaStreamMessageError('not JSON');
  }
  if (!isObject(raw)) throw new MediaStreamMessageError('not a JSON object');
  const event = raw.event;
  const seq = optional(raw, ['sequenceNumber'] as const);
  switch (event) {
    case 'connected':
      return { event, ...optional(raw, ['protocol', 'version'] as const) };
    case 'start': {
      const start = obj(raw, 'start', 'start');
      const fmt = obj(start, 'mediaFormat', 'start.start');
      const sampleRate = Number(fmt.sampleRate);
      const channels = fmt.channels === undefined ? 1 : Number(fmt.channels);
      if (!Number.isFinite(sampleRate)) throw new MediaStreamMessageError('start.start.mediaFormat.sampleRate must be a number');
      const streamSid = typeof raw.streamSid === 'string' ? raw.streamSid : str(start, 'streamSid', 'start.start');
      const info: StartInfo = {
        streamSid,
        ...optional(start, ['accountSid', 'callSid'] as const),
        mediaFormat: { encoding: str(fmt, 'encoding', 'start.start.mediaFormat'), sampleRate, channels },
      };
      if (Array.isArray(start.tracks)) info.tracks = start.tracks.filter((t): t is string => typeof t === 'string');
      if (isObject(start.customParameters)) info.customParameters = Object.fromEntries(Object.entries(start.customParameters).map(([k, v]) => [k, String(v)]));
      return { event, ...seq, streamSid, start: info };
    }
    case 'media': {
      const media = obj(raw, 'media', 'media');
      return { event, ...seq, streamSid: str(raw, 'streamSid', 'media'), media: { ...optional(media, ['track', 'chunk', 'timestamp'] as const), payload: str(media, 'payload', 'media.media') } };
    }
    case 'mark':
      return { event, ...seq, streamSid: str(raw, 'streamSid', 'mark'), mark: { name: str(obj(raw, 'mark', 'mark'), 'name', 'mark.mark') } };
    case 'dtmf': {
      const dtmf = obj(raw, 'dtmf', 'dtmf');
      return { event, ...seq, streamSid: str(raw, 'streamSid', 'dtmf'), dtmf: { ...optional(dtmf, ['track'] as const), digit: str(dtmf, 'digit', 'dtmf.dtmf') } };
    }
    case 'stop': {
      const stop = isObject(raw.stop) ? optional(raw.stop, ['accountSid', 'callSid'] as const) : undefined;
      return { event, ...seq, streamSid: str(raw, 'streamSid', 'stop'), ...(stop && { stop }) };
    }
    default:
      return undefined;
  }
}

/** The text frame of a message to the provider. */
export function formatOutbound(message: OutboundMessage): string {
  return JSON.stringify(message);
}
