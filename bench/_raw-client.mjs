// The baseline of the client benchmarks: a minimal realtime v2 client made
// of `ws` and `@msgpack/msgpack` and nothing else — no schema validation, no
// state machine, no journal, no streams. It does the same reliable exchange
// as ReliableSession (start, then per segment: text frames paced by
// input_ack, flush paced by segment_completed, then stop and finish), so the
// difference between the two is what the client costs.
// Not a bench itself (run-all skips files starting with `_`).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Decoder, Encoder } from '@msgpack/msgpack';
import WebSocket from 'ws';

const SUBPROTOCOL = 'realtime.tts.msgpack.v2';
const LIVE_PATH = '/v2/tts/live';
const TEXT_FRAME_MAX_CHARS = 2000;
// One codec instance each, as @msgpack/msgpack recommends: `decode()` builds a new Decoder per call.
const decoder = new Decoder();
const encoder = new Encoder();

/** Cut a segment into text frames of at most 2,000 code points. */
function frames(text) {
  const cps = Array.from(text);
  const out = [];
  for (let i = 0; i < cps.length; i += TEXT_FRAME_MAX_CHARS) out.push(cps.slice(i, i + TEXT_FRAME_MAX_CHARS).join(''));
  return out;
}

/**
 * One raw reliable session: `open()` connects, authenticates and starts the
 * request; `speak(segments, onAudio)` sends them and resolves at `finish`.
 */
export class RawReliableSession {
  #ws;
  #waiters = [];
  #events = 0;
  #segments = 0;
  /** Last `text.sequence` sent on this connection. */
  #sequence = 0;
  #onEvent = undefined;

  constructor({ wsUrl, apiKey, request, requestId = randomUUID() }) {
    this.wsUrl = wsUrl;
    this.apiKey = apiKey;
    this.request = request;
    this.requestId = requestId;
    this.prefix = `raw-${requestId.slice(0, 8)}`;
  }

  #id() {
    return `${this.prefix}-${++this.#events}`;
  }

  #send(event) {
    this.#ws.send(encoder.encode(event));
  }

  /** Wait for the next event named `name` (errors reject). */
  #next(name) {
    return new Promise((resolve, reject) => this.#waiters.push({ name, resolve, reject }));
  }

  #dispatch(event) {
    if (this.#onEvent) {
      this.#onEvent(event);
      return;
    }
    const i = this.#waiters.findIndex((w) => w.name === event.event || event.event === 'error');
    if (i < 0) return;
    const [w] = this.#waiters.splice(i, 1);
    if (event.event === 'error') w.reject(new Error(`${event.code}: ${event.message}`));
    else w.resolve(event);
  }

  /** Connect, authenticate (Bearer header) and start; resolves at `ready`. */
  async open() {
    const ws = new WebSocket(`${this.wsUrl}${LIVE_PATH}`, SUBPROTOCOL, {
      headers: { authorization: `Bearer ${this.apiKey}` },
      perMessageDeflate: false,
      maxPayload: 2 * 1024 * 1024,
    });
    this.#ws = ws;
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data) => this.#dispatch(decoder.decode(data)));
    let socketError = '';
    ws.on('error', (err) => (socketError = ` (${err.code ?? err.message})`));
    const closed = new Promise((_, reject) => ws.once('close', (code) => reject(new Error(`closed ${code}${socketError}`))));
    closed.catch(() => undefined);
    await Promise.race([this.#next('authenticated'), closed]);
    this.#send({ event: 'start', mode: 'reliable', event_id: this.#id(), request_id: this.requestId, request: this.request });
    const ready = await Promise.race([this.#next('ready'), closed]);
    this.closed = closed;
    return ready;
  }

  /**
   * Speak `segments` (texts, in order) with the reliable pacing rules; calls
   * `onAudio(bytes, segmentId)` for every audio frame. With `stop` (default
   * true) the request ends after them and this resolves at `finish`;
   * without, it resolves once they all completed and the request stays open
   * for more (`speak` again, or `finish()`). Resolves with the audio bytes.
   */
  speak(segments, onAudio, { stop = true } = {}) {
    const queue = segments.map((text) => ({ id: `${this.prefix}-s${++this.#segments}`, frames: frames(text), sent: 0 }));
    let awaitingAck = false;
    let flushOutstanding;
    let next = 0; // first segment not yet flushed
    let stopped = false;
    let bytes = 0;
    return new Promise((resolve, reject) => {
      const pump = () => {
        while (!awaitingAck && next < queue.length) {
          const seg = queue[next];
          if (seg.sent < seg.frames.length) {
            this.#send({ event: 'text', event_id: this.#id(), sequence: ++this.#sequence, text: seg.frames[seg.sent++] });
            awaitingAck = true;
            return;
          }
          if (flushOutstanding !== undefined) return;
          this.#send({ event: 'flush', event_id: this.#id(), segment_id: seg.id });
          flushOutstanding = seg.id;
          next++;
        }
        if (next === queue.length && flushOutstanding === undefined) {
          if (!stop) {
            this.#onEvent = undefined;
            resolve(bytes);
          } else if (!stopped) {
            stopped = true;
            this.#send({ event: 'stop', event_id: this.#id() });
          }
        }
      };
      this.#onEvent = (event) => {
        switch (event.event) {
          case 'audio':
            bytes += event.audio.byteLength;
            onAudio?.(event.audio, event.segment_id);
            return;
          case 'input_ack':
            awaitingAck = false;
            pump();
            return;
          case 'segment_completed':
            if (flushOutstanding === event.segment_id) flushOutstanding = undefined;
            pump();
            return;
          case 'finish':
            this.#onEvent = undefined;
            this.#ws.close();
            resolve(bytes);
            return;
          case 'error':
            this.#onEvent = undefined;
            this.#ws.terminate();
            reject(new Error(`${event.code}: ${event.message}`));
            return;
          default:
        }
      };
      this.closed.catch((err) => {
        if (this.#onEvent) reject(err);
      });
      pump();
    });
  }

  /** End an open request (after `speak(..., { stop: false })`); resolves at `finish`. */
  finish() {
    return this.speak([], undefined, { stop: true });
  }

  close() {
    this.#ws?.terminate();
  }
}

/** `performance.now()`, re-exported so every bench script uses one clock. */
export const now = () => performance.now();
