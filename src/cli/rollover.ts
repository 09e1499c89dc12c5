/**
 * Texts of any length on realtime: a realtime request (session) may carry
 * `LIMITS.sessionMaxUnits` billing units (spec 8), one per character. A
 * `RolloverSpeech` speaks the text on one SpeechStream after another, each
 * within a budget below that limit, cutting between sentences (else between
 * words) so no character is lost or spoken twice at a seam, and joins their
 * audio in order into one stream (a later part's WAV header is dropped).
 *
 * The next request is created and opened ahead, when the current one is
 * well into its budget, and gets its text at the cut, while the current
 * one's audio is still being read: its audio is ready when the seam comes,
 * so there is no gap. It uses SpeechStream's public API only.
 */
import { once } from 'node:events';
import { Duplex } from 'node:stream';
import { VoxpipeError } from '../errors.js';
import { LIMITS } from '../protocol/limits.js';
import { wavHeaderLength } from '../protocol/wav.js';
import type { ReadyInfo } from '../transport.js';
import type { InterruptReport, SpeechStream, SpeechStreamSummary } from '../stream/speech-stream.js';

/** The default budget of one request: 95 % of the session limit (a margin for units counted otherwise than UTF-16 code units). */
export const DEFAULT_PART_UNITS = Math.floor(LIMITS.sessionMaxUnits * 0.95);

export interface RolloverOptions {
  /** A new SpeechStream (a new realtime request), not yet opened. */
  create(): Promise<SpeechStream>;
  /** Characters (UTF-16 code units, at least one unit each) per request; default `DEFAULT_PART_UNITS`. */
  partUnits?: number;
  /** A new part (request) starts: its index from 0 and the characters it gets so far. */
  onPart?(info: { index: number; stream: SpeechStream }): void;
}

/** The summary of every part together; `requestIds` lists each part's request. */
export interface RolloverSummary extends SpeechStreamSummary {
  requestIds: string[];
  /** Characters of the text handed to the parts (spoken, or being spoken). */
  charactersSent: number;
}

/** The end of the last sentence within the first `max` characters of `text` (followed by whitespace, or the text's end), else 0. */
export function sentenceCut(text: string, max: number): number {
  let best = 0;
  for (const m of text.slice(0, max + 1).matchAll(/[.!?\u2026\u3002\uff01\uff1f]["'\u201d\u2019)\]]*(?=\s|$)/gu)) {
    const end = m.index + m[0].length;
    if (end <= max && (end < text.length ? /\s/u.test(text[end]!) : true)) best = end;
  }
  return best;
}

/** Where to cut `text` so the head has at most `max` characters: after a sentence end, else a space, else at `max` (never inside a surrogate pair). */
export function cutPoint(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const sentence = sentenceCut(text, max);
  if (sentence > 0) return sentence;
  const space = text.lastIndexOf(' ', max);
  if (space > 0) return space;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

interface Part {
  stream: SpeechStream;
  /** Characters written to it. */
  written: number;
}

/** A Duplex like SpeechStream (text in, audio out) over as many requests as the text needs. */
export class RolloverSpeech extends Duplex {
  readonly #options: RolloverOptions;
  readonly #budget: number;
  readonly #parts: Part[] = [];
  #current: Part;
  /** The next part, created (and opening) ahead. */
  #next: Promise<Part> | undefined;
  #pending = '';
  #ended = false;
  /** Resolves `#pump` waiting for the next part to exist (or the end). */
  #partWaiter: (() => void) | undefined;
  #readWaiter: (() => void) | undefined;
  #interrupted = false;
  #sent = 0;

  private constructor(first: SpeechStream, options: RolloverOptions) {
    super({ decodeStrings: false, defaultEncoding: 'utf8', allowHalfOpen: true });
    this.#options = options;
    this.#budget = Math.max(1, options.partUnits ?? DEFAULT_PART_UNITS);
    this.#current = this.#addPart(first);
    void this.#pump();
  }

  static async create(options: RolloverOptions): Promise<RolloverSpeech> {
    return new RolloverSpeech(await options.create(), options);
  }

  #addPart(stream: SpeechStream): Part {
    const part = { stream, written: 0 };
    this.#parts.push(part);
    this.#options.onPart?.({ index: this.#parts.length - 1, stream });
    this.#partWaiter?.();
    return part;
  }

  /** The first request's `ready` (what the audio is: format, rate, layout). */
  open(): Promise<ReadyInfo> {
    return this.#parts[0]!.stream.open();
  }

  get info(): ReadyInfo | undefined {
    return this.#parts[0]!.stream.info;
  }

  /** Requests used so far. */
  get parts(): number {
    return this.#parts.length;
  }

  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
    this.#pending += text;
    this.#feed().then(() => callback(), (err: unknown) => callback(err as Error));
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#feed()
      .then(async () => {
        this.#ended = true;
        this.#current.stream.end();
        // A part opened ahead and not needed: end it empty.
        const spare = this.#next;
        this.#next = undefined;
        if (spare) {
          const part = await spare.catch(() => undefined);
          if (part) {
            part.stream.resume();
            part.stream.end();
          }
        }
        this.#partWaiter?.();
      })
      .then(() => callback(), (err: unknown) => callback(err as Error));
  }

  /** Hand the pending text to the parts, cutting to a new request where the current one's budget ends. */
  async #feed(): Promise<void> {
    // Near its budget's end a request ends at the first sentence end that comes; only a sentence longer than this reserve is cut between words.
    const reserve = Math.min(2_000, Math.floor(this.#budget / 10));
    while (this.#pending.length > 0 && !this.#interrupted) {
      const written = this.#current.written;
      if (written + this.#pending.length > this.#budget * 0.8) this.#prepareNext();
      const room = this.#budget - written;
      if (written + this.#pending.length <= this.#budget - reserve) {
        await this.#writeTo(this.#current, this.#pending);
        this.#pending = '';
        break;
      }
      const sentence = sentenceCut(this.#pending, Math.min(room, this.#pending.length));
      if (sentence <= 0 && this.#pending.length <= room) {
        // No sentence end yet, and it still fits: wait for more text (or the end).
        await this.#writeTo(this.#current, this.#pending);
        this.#pending = '';
        break;
      }
      const cut = sentence > 0 ? sentence : cutPoint(this.#pending, room);
      if (cut > 0) await this.#writeTo(this.#current, this.#pending.slice(0, cut));
      this.#pending = this.#pending.slice(cut);
      await this.#rollover();
    }
  }

  async #writeTo(part: Part, text: string): Promise<void> {
    part.written += text.length;
    this.#sent += text.length;
    if (!part.stream.write(text)) await once(part.stream, 'drain');
  }

  #prepareNext(): void {
    if (this.#next) return;
    this.#next = this.#options.create().then((stream) => {
      // Connect now; a failure surfaces when the part is used.
      stream.open().catch(() => undefined);
      return { stream, written: 0 };
    });
    this.#next.catch(() => undefined);
  }

  /** End the current request; the next one (opened ahead) takes the rest. */
  async #rollover(): Promise<void> {
    this.#prepareNext();
    const next = this.#next!;
    this.#next = undefined;
    this.#current.stream.end();
    this.#current = this.#addPart((await next).stream);
  }

  override _read(): void {
    const w = this.#readWaiter;
    this.#readWaiter = undefined;
    w?.();
  }

  /** The parts' audio in order; a later part's WAV header is left out. */
  async #pump(): Promise<void> {
    try {
      for (let i = 0; ; i++) {
        while (i >= this.#parts.length && !(this.#ended && this.#next === undefined) && !this.#interrupted) {
          await new Promise<void>((resolve) => (this.#partWaiter = resolve));
          this.#partWaiter = undefined;
        }
        const part = this.#parts[i];
        if (!part || this.#interrupted) break;
        let firstChunk = i > 0;
        for await (const chunk of part.stream) {
          if (this.#interrupted) break;
          let buf = chunk as Buffer;
          if (firstChunk && part.stream.info?.format === 'wav') {
            const header = wavHeaderLength(buf);
            if (header !== undefined) buf = buf.subarray(header);
          }
          firstChunk = false;
          if (buf.length > 0 && !this.push(buf)) await new Promise<void>((resolve) => (this.#readWaiter = resolve));
        }
      }
      this.push(null);
    } catch (err) {
      this.destroy(err instanceof Error ? err : new VoxpipeError('internal_error', String(err)));
    }
  }

  /** Barge-in: every part stops; the report covers what was delivered of each. */
  async interrupt(): Promise<InterruptReport> {
    this.#interrupted = true;
    const spare = this.#next;
    this.#next = undefined;
    void spare?.then((p) => p.stream.interrupt()).catch(() => undefined);
    const reports = await Promise.all(this.#parts.map((p) => p.stream.interrupt().catch(() => undefined)));
    this.#partWaiter?.();
    this.#readWaiter?.();
    this.push(null);
    const report: InterruptReport = { spoken: [], spokenChars: 0, heardText: '', heardConfidence: 1, unspokenText: this.#pending };
    let heardEnded = false;
    for (const r of reports) {
      if (!r) continue;
      // Heard to the word: the parts heard whole, then the part the listener was in.
      if (!heardEnded) {
        report.heardText += r.heardText;
        report.heardConfidence = r.heardConfidence;
        heardEnded = r.spoken.some((s) => !s.complete);
      }
      report.spoken.push(...r.spoken);
      report.spokenChars += r.spokenChars;
      report.unspokenText += r.unspokenText;
    }
    return report;
  }

  /** Figures of every part together (complete once the readable side ended). */
  summary(): RolloverSummary {
    const all = this.#parts.map((p) => p.stream.summary());
    const first = all[0]!;
    const sum = (f: (s: SpeechStreamSummary) => number) => all.reduce((n, s) => n + f(s), 0);
    return {
      ...first,
      requestIds: all.map((s) => s.requestId),
      segments: all.flatMap((s) => s.segments),
      units: sum((s) => s.units),
      rechargedUnits: sum((s) => s.rechargedUnits),
      bytes: sum((s) => s.bytes),
      retries: sum((s) => s.retries),
      resumed: sum((s) => s.resumed),
      failovers: sum((s) => s.failovers),
      charactersSent: this.#sent,
    };
  }
}
