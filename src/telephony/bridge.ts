/**
 * A bridge between a SpeechStream and a telephony provider's media stream
 * (Twilio Media Streams and the like, `protocol.ts`): text in, the caller's
 * audio out.
 *
 * The provider connects to your WebSocket server when a call starts; hand the
 * socket to `MediaStreamBridge.accept()`. `speak(speech)` plays a voxpipe
 * SpeechStream (`format: 'pcm'`) to the caller: its PCM is resampled to
 * 8 kHz (band-limited, `resample.ts`), G.711-encoded with the stream's law
 * (`g711.ts`) and sent as 20 ms `media` frames, with a `mark` every
 * `markEveryFrames` frames and at every segment end. The provider echoes a
 * mark when playback reaches it, so the last echoed mark says how much the
 * caller heard. `bargeIn()` sends `clear` (the provider drops what it had
 * buffered), interrupts the SpeechStream and reports the text heard up to
 * the last acknowledged mark, by the one heard rule of every platform
 * (`heardAt`, `stream/heard.ts`: the position in G.711 bytes, the word
 * timings the SpeechStream estimated of each segment, of the audio it had
 * so far for one still arriving: `SpeechStream.wordTimings`), so the heard
 * text ends at a word and is a prefix of what was written. The caller's audio
 * comes out as 8 kHz PCM (`audio` events, or `callerAudio()`).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'eventemitter3';
import { TimeoutError, VoxpipeError } from '../errors.js';
import type { AudioChunk } from '../protocol/audio.js';
import { Pcm16Reader } from '../protocol/pcm16.js';
import { heardAt, type HeardSegment, type SpokenAudio } from '../stream/heard.js';
import type { SpeechStream } from '../stream/speech-stream.js';
import { decodeG711, encodeG711, g711Silence, G711Law } from './g711.js';
import { FRAME_BYTES, FRAME_MS, MediaEncoding, TELEPHONY_SAMPLE_RATE, formatOutbound, parseInbound, MediaStreamMessageError, type InboundMessage, type OutboundMessage, type StartInfo } from './protocol.js';
import { Resampler } from './resample.js';

/**
 * The socket the provider connected on: what the bridge needs of it. A `ws`
 * WebSocket (server side) fits as it is.
 */
export interface MediaStreamSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  /** 1 when open (the WebSocket constants). */
  readonly readyState: number;
}

const SOCKET_OPEN = 1;

export interface MediaStreamBridgeOptions {
  /** Frames between two marks while a segment plays. Default 10 (every 200 ms): the finest the heard position can be. */
  markEveryFrames?: number;
  /** How long `accept()` waits for the provider's `start`. Default 10_000 (10 s). */
  startTimeoutMs?: number;
}

export type { HeardSegment } from '../stream/heard.js';

/** What the caller heard of one `speak()`. */
export interface HeardReport {
  /** The text heard, to the last acknowledged mark; within a segment, to the word (`heardAt`). */
  heardText: string;
  /** Audio the provider played, per the last acknowledged mark, in ms. */
  playedMs: number;
  /** Audio sent to the provider, in ms. */
  sentMs: number;
  segments: HeardSegment[];
  /** Text spoken by the stream but not heard, and text never spoken. */
  unheardText: string;
  /** Name of the last acknowledged mark, if any. */
  lastMark: string | undefined;
}

/** How a `speak()` ended. */
export interface SpeakResult {
  /** `completed`: played to the end; `interrupted`: `bargeIn()`; `stopped`: the call ended (`stop` or the socket closed). */
  outcome: 'completed' | 'interrupted' | 'stopped';
  heard: HeardReport;
  /** Media frames sent. */
  frames: number;
  /** Marks sent, and echoed back before the end. */
  marksSent: number;
  marksAcknowledged: number;
}

export interface CallerAudioInfo {
  track: string | undefined;
  chunk: string | undefined;
  timestamp: string | undefined;
}

export interface MediaStreamBridgeEvents {
  /** The caller's audio, 8 kHz 16-bit PCM (decoded from the stream's law). */
  audio: (pcm: Int16Array, info: CallerAudioInfo) => void;
  /** A mark echoed by the provider. */
  mark: (name: string) => void;
  dtmf: (digit: string) => void;
  /** The provider ended the stream. */
  stop: () => void;
  /** A frame that is not a message of the protocol (skipped). */
  warning: (warning: { code: string; message: string }) => void;
}

interface SegmentTrack {
  segmentId: string;
  text: string | undefined;
  /** Source samples of the stream before this segment, and in it. */
  sourceStart: number;
  sourceSamples: number;
  /** Its span in 8 kHz samples (G.711 bytes) of the turn. */
  start8k: number;
  end8k: number | undefined;
}

interface Turn {
  speech: SpeechStream;
  segments: SegmentTrack[];
  /** Every segment the stream cut while this turn played, in order: id -> text. */
  texts: Map<string, string>;
  /** Text written to the stream and not yet cut into a segment when the turn ended. */
  leftover: string;
  /** Mark name -> 8 kHz samples of the turn sent before it. */
  marks: Map<string, number>;
  endMark: string | undefined;
  acked: number;
  lastMark: string | undefined;
  ackedMarks: number;
  sent8k: number;
  frames: number;
  cleared: boolean;
  done: boolean;
  finish: (outcome: SpeakResult['outcome']) => void;
  result: Promise<SpeakResult>;
}

function toBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function lawOf(start: StartInfo): G711Law {
  const { encoding, sampleRate, channels } = start.mediaFormat;
  if (sampleRate !== TELEPHONY_SAMPLE_RATE || channels !== 1) {
    throw new VoxpipeError('unsupported', `media stream format ${sampleRate} Hz x ${channels} channels: the bridge speaks 8000 Hz mono`);
  }
  if (encoding === MediaEncoding.mulaw) return G711Law.mulaw;
  if (encoding === MediaEncoding.alaw) return G711Law.alaw;
  throw new VoxpipeError('unsupported', `media stream encoding ${JSON.stringify(encoding)}: the bridge speaks ${MediaEncoding.mulaw} and ${MediaEncoding.alaw}`);
}

export class MediaStreamBridge extends EventEmitter<MediaStreamBridgeEvents> {
  /** The provider's id of this stream; every message to it carries it. */
  readonly streamSid: string;
  readonly callSid: string | undefined;
  /** Custom parameters of the `<Stream>` (`start.customParameters`). */
  readonly customParameters: Readonly<Record<string, string>>;
  /** The G.711 law of the stream (`start.mediaFormat.encoding`). */
  readonly law: G711Law;
  readonly #socket: MediaStreamSocket;
  readonly #markEvery: number;
  readonly #markPrefix = randomUUID().slice(0, 8);
  #markCounter = 0;
  #turn: Turn | undefined;
  #stopped = false;
  readonly #callerQueue: Int16Array[] = [];
  #callerWake: (() => void) | undefined;

  private constructor(socket: MediaStreamSocket, start: StartInfo, options: MediaStreamBridgeOptions) {
    super();
    this.#socket = socket;
    this.streamSid = start.streamSid;
    this.callSid = start.callSid;
    this.customParameters = start.customParameters ?? {};
    this.law = lawOf(start);
    this.#markEvery = options.markEveryFrames ?? 10;
  }

  /**
   * Wait for the provider's `start` on a socket it just opened and bridge it.
   * Rejects with a `TimeoutError` when no `start` comes in `startTimeoutMs`,
   * a `VoxpipeError` `unsupported` for a media format other than 8 kHz mono
   * mu-law or A-law, or `connection_closed` when the socket closes first.
   */
  static accept(socket: MediaStreamSocket, options: MediaStreamBridgeOptions = {}): Promise<MediaStreamBridge> {
    const every = options.markEveryFrames ?? 10;
    if (!Number.isInteger(every) || every < 1) throw new VoxpipeError('invalid_arguments', `markEveryFrames must be a whole number >= 1, got ${String(options.markEveryFrames)}`);
    return new Promise((resolve, reject) => {
      let bridge: MediaStreamBridge | undefined;
      let settled = false;
      const settle = (err?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(bridge!);
      };
      const timeoutMs = options.startTimeoutMs ?? 10_000;
      const timer = setTimeout(() => settle(new TimeoutError(`no media stream 'start' within ${timeoutMs} ms`)), timeoutMs);
      socket.on('message', (data, isBinary) => {
        if (bridge) return bridge.#onFrame(data, isBinary);
        if (isBinary) return;
        let msg: InboundMessage | undefined;
        try {
          msg = parseInbound(toBuffer(data).toString('utf8'));
        } catch (err) {
          return settle(new VoxpipeError('invalid_message', `media stream frame before 'start': ${(err as Error).message}`));
        }
        if (msg?.event !== 'start') return; // `connected` and anything else before start
        try {
          bridge = new MediaStreamBridge(socket, msg.start, options);
          settle();
        } catch (err) {
          settle(err);
        }
      });
      socket.on('close', () => {
        if (bridge) bridge.#onStop();
        else settle(new VoxpipeError('connection_closed', "the media stream closed before 'start'"));
      });
    });
  }

  #send(message: OutboundMessage): void {
    if (this.#socket.readyState === SOCKET_OPEN) this.#socket.send(formatOutbound(message));
  }

  #onFrame(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (isBinary) {
      this.emit('warning', { code: 'invalid_message', message: 'binary frame on a media stream (JSON text expected); skipped' });
      return;
    }
    let msg: InboundMessage | undefined;
    try {
      msg = parseInbound(toBuffer(data).toString('utf8'));
    } catch (err) {
      if (!(err instanceof MediaStreamMessageError)) throw err;
      this.emit('warning', { code: 'invalid_message', message: `media stream frame skipped: ${err.message}` });
      return;
    }
    if (!msg) return;
    switch (msg.event) {
      case 'media': {
        if (msg.media.track !== undefined && msg.media.track !== 'inbound') return;
        const pcm = decodeG711(Buffer.from(msg.media.payload, 'base64'), this.law);
        this.#callerQueue.push(pcm);
        this.#callerWake?.();
        this.emit('audio', pcm, { track: msg.media.track, chunk: msg.media.chunk, timestamp: msg.media.timestamp });
        return;
      }
      case 'mark':
        this.#onMark(msg.mark.name);
        this.emit('mark', msg.mark.name);
        return;
      case 'dtmf':
        this.emit('dtmf', msg.dtmf.digit);
        return;
      case 'stop':
        this.#onStop();
        return;
      default:
        return;
    }
  }

  #onMark(name: string): void {
    const turn = this.#turn;
    // After `clear` the provider returns the marks it dropped: they say nothing of playback.
    if (!turn || turn.cleared) return;
    const at = turn.marks.get(name);
    if (at === undefined) return;
    turn.ackedMarks++;
    if (at >= turn.acked) {
      turn.acked = at;
      turn.lastMark = name;
    }
    if (name === turn.endMark) turn.finish('completed');
  }

  #onStop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    const turn = this.#turn;
    if (turn && !turn.done) {
      turn.cleared = true;
      turn.leftover = turn.speech.bufferedText;
      void turn.speech.interrupt().catch(() => undefined).then(() => turn.finish('stopped'));
    }
    this.#callerWake?.();
    this.emit('stop');
  }

  /** The stream ended (`stop` from the provider, or the socket closed). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The caller's audio as it arrives, 8 kHz 16-bit PCM; ends when the stream stops. */
  async *callerAudio(): AsyncGenerator<Int16Array> {
    for (;;) {
      const next = this.#callerQueue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.#stopped) return;
      await new Promise<void>((resolve) => (this.#callerWake = resolve));
      this.#callerWake = undefined;
    }
  }

  /**
   * Play a SpeechStream to the caller. Call it before writing text to the
   * stream (the segment texts are read from its `segment-start` events).
   * Resolves when the provider echoed the last mark (played to the end),
   * after `bargeIn()`, or when the call stopped. One turn at a time.
   */
  speak(speech: SpeechStream): Promise<SpeakResult> {
    if (this.#turn && !this.#turn.done) throw new VoxpipeError('invalid_state', 'the bridge is already speaking: await the previous speak() or bargeIn() first');
    if (this.#stopped) throw new VoxpipeError('invalid_state', 'the media stream has stopped');
    let finish!: (outcome: SpeakResult['outcome']) => void;
    const result = new Promise<SpeakResult>((resolve) => {
      finish = (outcome) => {
        if (turn.done) return;
        turn.done = true;
        resolve({ outcome, heard: this.#heard(turn), frames: turn.frames, marksSent: turn.marks.size, marksAcknowledged: turn.ackedMarks });
      };
    });
    const turn: Turn = { speech, segments: [], texts: new Map(), leftover: '', marks: new Map(), endMark: undefined, acked: 0, lastMark: undefined, ackedMarks: 0, sent8k: 0, frames: 0, cleared: false, done: false, finish, result };
    this.#turn = turn;
    const texts = turn.texts;
    speech.on('segment-start', ({ segmentId, text }) => {
      texts.set(segmentId, text);
      const seg = turn.segments.find((s) => s.segmentId === segmentId);
      if (seg) seg.text = text;
    });
    void this.#pump(turn, texts).catch((err: unknown) => {
      // The stream failed: what was sent still plays; report what was heard once it has.
      turn.cleared = true;
      this.emit('warning', { code: err instanceof VoxpipeError ? err.code : 'internal_error', message: `speech stream failed: ${(err as Error).message}` });
      turn.finish('stopped');
    });
    return result;
  }

  async #pump(turn: Turn, texts: Map<string, string>): Promise<void> {
    let resampler: Resampler | undefined;
    let rate = 0;
    const pcm16 = new Pcm16Reader(); // chunks may end mid-sample
    let pending = new Uint8Array(0); // encoded bytes not yet a whole frame
    let sourceSamples = 0;
    let boundaries: number[] = []; // segment ends (8 kHz samples) not yet marked
    const silence = g711Silence(this.law);

    const sendEncoded = (pcm8k: Int16Array, final: boolean) => {
      const encoded = encodeG711(pcm8k, this.law);
      const joined = new Uint8Array(pending.length + encoded.length);
      joined.set(pending);
      joined.set(encoded, pending.length);
      let offset = 0;
      while (joined.length - offset >= FRAME_BYTES || (final && joined.length > offset)) {
        if (turn.cleared) return;
        let frame = joined.subarray(offset, offset + FRAME_BYTES);
        if (frame.length < FRAME_BYTES) {
          // The last frame is padded with silence: providers play whole 20 ms frames.
          const padded = new Uint8Array(FRAME_BYTES).fill(silence);
          padded.set(frame);
          frame = padded;
        }
        offset += FRAME_BYTES;
        this.#send({ event: 'media', streamSid: this.streamSid, media: { payload: Buffer.from(frame).toString('base64') } });
        turn.frames++;
        turn.sent8k += FRAME_BYTES;
        const segmentEnded = boundaries.length > 0 && boundaries[0]! <= turn.sent8k;
        if (segmentEnded) boundaries = boundaries.filter((b) => b > turn.sent8k);
        if (segmentEnded || turn.frames % this.#markEvery === 0) this.#mark(turn);
      }
      pending = joined.slice(offset);
    };

    const endSegment = (seg: SegmentTrack | undefined) => {
      if (!seg || seg.end8k !== undefined) return;
      seg.end8k = Resampler.outputLength(seg.sourceStart + seg.sourceSamples, rate, TELEPHONY_SAMPLE_RATE);
      boundaries.push(seg.end8k);
    };

    for await (const chunk of turn.speech.chunks()) {
      if (turn.cleared) break;
      if (!resampler) {
        this.#checkChunk(chunk);
        rate = chunk.sampleRate;
        resampler = new Resampler({ fromRate: rate, toRate: TELEPHONY_SAMPLE_RATE });
      }
      let seg = turn.segments[turn.segments.length - 1];
      if (seg?.segmentId !== chunk.segmentId) {
        endSegment(seg);
        seg = { segmentId: chunk.segmentId, text: texts.get(chunk.segmentId), sourceStart: sourceSamples, sourceSamples: 0, start8k: Resampler.outputLength(sourceSamples, rate, TELEPHONY_SAMPLE_RATE), end8k: undefined };
        turn.segments.push(seg);
      }
      const samples = pcm16.push(chunk.data);
      seg.sourceSamples += samples.length;
      sourceSamples += samples.length;
      sendEncoded(resampler.push(samples), false);
    }
    if (turn.cleared || turn.done) return;
    endSegment(turn.segments[turn.segments.length - 1]);
    if (resampler) sendEncoded(resampler.flush(), true);
    if (turn.cleared) return;
    // The last mark: its echo says the caller heard everything.
    turn.endMark = this.#mark(turn);
    if (this.#stopped) turn.finish('stopped');
  }

  #checkChunk(chunk: AudioChunk): void {
    if (chunk.format !== 'pcm') {
      throw new VoxpipeError('unsupported', `the telephony bridge takes a pcm speech stream (createSpeechStream(config, { format: 'pcm' })), got ${chunk.format}`);
    }
    if (chunk.channels !== 1 || chunk.bitDepth !== 16) {
      throw new VoxpipeError('unsupported', `the telephony bridge takes mono 16-bit PCM, got ${chunk.channels} channels of ${chunk.bitDepth} bits`);
    }
  }

  #mark(turn: Turn): string {
    const name = `${this.#markPrefix}-${++this.#markCounter}`;
    turn.marks.set(name, turn.sent8k);
    this.#send({ event: 'mark', streamSid: this.streamSid, mark: { name } });
    return name;
  }

  /**
   * Barge-in: send `clear` (the provider drops the audio it had buffered),
   * stop the SpeechStream (`interrupt()`) and report what the caller heard,
   * to the last mark the provider acknowledged before the clear. Nothing is
   * sent after the clear. Resolves undefined when nothing is being spoken.
   */
  async bargeIn(): Promise<HeardReport | undefined> {
    const turn = this.#turn;
    if (!turn || turn.done) return undefined;
    turn.cleared = true;
    this.#send({ event: 'clear', streamSid: this.streamSid });
    turn.leftover = turn.speech.bufferedText;
    const report = await turn.speech.interrupt().catch(() => undefined);
    // Texts of segments spoken before speak() was called come from the report.
    for (const s of report?.spoken ?? []) {
      const seg = turn.segments.find((x) => x.segmentId === s.segmentId);
      if (seg && seg.text === undefined) seg.text = s.text;
      if (!turn.texts.has(s.segmentId)) turn.texts.set(s.segmentId, s.text);
    }
    turn.finish('interrupted');
    return (await turn.result).heard;
  }

  #heard(turn: Turn): HeardReport {
    const played = turn.acked;
    // Each segment's audio as the caller's side has it, in G.711 bytes (one a sample); one still arriving has what was sent of it,
    // and the words whose audio the stream has had so far (the stream's estimate, final or provisional).
    const spoken: SpokenAudio[] = turn.segments.map((s) => ({ segmentId: s.segmentId, text: s.text ?? '', bytes: (s.end8k ?? turn.sent8k) - s.start8k, complete: s.end8k !== undefined, words: turn.speech.wordTimings(s.segmentId) }));
    const layout = { format: this.law, sampleRate: TELEPHONY_SAMPLE_RATE, channels: 1 };
    const heard = heardAt(spoken, { bytes: played }, layout);
    // Segments cut but never played.
    const played8k = new Set(turn.segments.map((s) => s.segmentId));
    const never: string[] = [];
    for (const [id, text] of turn.texts) if (!played8k.has(id)) never.push(text);
    return {
      heardText: heard.heardText,
      playedMs: (played / TELEPHONY_SAMPLE_RATE) * 1000,
      sentMs: turn.frames * FRAME_MS,
      segments: heard.segments,
      unheardText: spoken.map((s) => s.text).join('').slice(heard.heardText.length) + never.join('') + turn.leftover,
      lastMark: turn.lastMark,
    };
  }

  /** Close the socket (ends the call's stream on the provider's side). */
  close(): void {
    this.#socket.close(1000);
  }
}
