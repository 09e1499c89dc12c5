/**
 * The `espeak` engine: real offline speech from eSpeak NG compiled to
 * WebAssembly (`@echogarden/espeak-ng-emscripten`, GPL-3.0, an optional
 * dependency loaded at run time). eSpeak synthesizes synchronously, so it runs
 * in worker threads; each chunk its callback emits (~90 ms of audio) is posted
 * to the caller at once, so the first audio arrives before synthesis ends and
 * the server's event loop never blocks.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AbortError } from '../../errors.js';
import { AsyncQueue } from './async-queue.js';
import { EngineError, EngineErrorCode } from './errors.js';
import { espeakPitch, espeakRate, espeakVoiceCandidates } from './espeak-params.js';
import { ESPEAK_WORKER_SOURCE } from './espeak-worker-source.js';
import { resolveSynthesis } from './options.js';
import { EngineName, type SpeechEngine, type SynthesisOptions } from './types.js';

/** Output rate of eSpeak NG. */
export const ESPEAK_SAMPLE_RATE = 22_050;
const PACKAGE = '@echogarden/espeak-ng-emscripten';

let located: string | undefined | null = null; // null: not looked up yet

/** Path of the package's `espeak-ng.js`, or undefined when it is not installed. */
function locateModule(): string | undefined {
  if (located !== null) return located;
  try {
    const main = createRequire(import.meta.url).resolve(PACKAGE);
    // The voice data sits beside the module and is loaded by it at start-up.
    located = existsSync(join(dirname(main), 'espeak-ng.data')) ? main : undefined;
  } catch {
    located = undefined;
  }
  return located;
}

/**
 * Whether the optional eSpeak package is installed (module and voice data).
 * Does not load it: loading costs ~150 ms and 24 MB, paid by `warmUp()`.
 */
export async function espeakAvailable(): Promise<boolean> {
  return locateModule() !== undefined;
}

interface SynthRequest {
  type: 'synth';
  id: number;
  text: string;
  voices: string[];
  rate: number;
  pitch: number;
  gain: number;
  /** Ask the worker for eSpeak's word events (test and bench hook, never on the wire). */
  words?: boolean;
}

/**
 * Where eSpeak put one word of the text it spoke: its truth for measuring word
 * timings estimated from audio. Test and bench use only.
 */
export interface EspeakWordEvent {
  /** 0-based index of the word's first character in the text. */
  charStart: number;
  /** Length of the word in characters, as eSpeak counts it. */
  length: number;
  /** Where the word starts in the audio, in ms from the first sample. */
  startMs: number;
}

interface WorkerWord {
  at: number;
  length: number;
  ms: number;
}

type WorkerMessage =
  | { type: 'ready'; sampleRate: number }
  | { type: 'chunk'; id: number; pcm: ArrayBuffer; words?: WorkerWord[] }
  | { type: 'done'; id: number; aborted: boolean }
  | { type: 'error'; id: number; message: string; fatal: boolean }
  | { type: 'load-failed'; message: string };

interface Job {
  request: SynthRequest;
  queue: AsyncQueue<Buffer>;
  slot: Slot | undefined;
  /** The worker reported the end of this job (or the job never reached one). */
  finished: boolean;
  /** eSpeak's word events, when the request asked for them. */
  words?: EspeakWordEvent[];
}

const SlotState = {
  starting: 'starting',
  idle: 'idle',
  busy: 'busy',
  dead: 'dead',
} as const;
type SlotState = (typeof SlotState)[keyof typeof SlotState];

/** One worker thread with its cancel cell and the job it runs. */
interface Slot {
  worker: Worker;
  cancel: Int32Array;
  state: SlotState;
  job: Job | undefined;
  ready: Promise<void>;
}

/** Options of `EspeakEngine`. */
export interface EspeakEngineOptions {
  /** Worker threads synthesizing in parallel; default 1 (eSpeak runs ~100x real time). */
  workers?: number;
  /**
   * Throwaway syntheses of a sentence each worker started by `warmUp()` runs
   * before it takes requests, so V8 has compiled and optimized eSpeak's code
   * (the first syntheses are up to 50x slower); default 3. Workers started by
   * a waiting request skip it.
   */
  warmUpRounds?: number;
}

/** eSpeak NG in a pool of worker threads (22.05 kHz mono s16le). */
export class EspeakEngine implements SpeechEngine {
  readonly name = EngineName.espeak;
  readonly sampleRate = ESPEAK_SAMPLE_RATE;
  readonly #size: number;
  readonly #warmUpRounds: number;
  readonly #slots = new Set<Slot>();
  readonly #pending: Job[] = [];
  #nextId = 1;
  #warming = 0;
  #closed = false;

  constructor(options: EspeakEngineOptions = {}) {
    this.#size = Math.max(1, Math.floor(options.workers ?? 1));
    this.#warmUpRounds = Math.max(0, Math.floor(options.warmUpRounds ?? 3));
  }

  async *synthesize(text: string, options: SynthesisOptions): AsyncGenerator<Buffer> {
    yield* this.#run(text, options, undefined);
  }

  /**
   * Synthesize `text` whole and report where eSpeak put each word: the truth
   * that word timings estimated from the audio are measured against (tests and
   * benches only; the server never sends it).
   */
  async synthesizeWithWords(text: string, options: SynthesisOptions): Promise<{ pcm: Buffer; words: EspeakWordEvent[] }> {
    const words: EspeakWordEvent[] = [];
    const parts: Buffer[] = [];
    for await (const part of this.#run(text, options, words)) parts.push(part);
    return { pcm: Buffer.concat(parts), words };
  }

  async *#run(text: string, options: SynthesisOptions, words: EspeakWordEvent[] | undefined): AsyncGenerator<Buffer> {
    if (this.#closed) throw new EngineError(EngineErrorCode.closed, 'espeak engine is closed');
    const { signal } = options;
    if (signal?.aborted) throw new AbortError();
    if (locateModule() === undefined) throw new EngineError(EngineErrorCode.generationFailed, `${PACKAGE} is not installed`);
    const { pace, gain } = resolveSynthesis(options);
    const job: Job = {
      request: {
        type: 'synth',
        id: this.#nextId++,
        text,
        voices: espeakVoiceCandidates(options.voice, options.language),
        rate: espeakRate(pace),
        pitch: espeakPitch(options.voice),
        gain,
        ...(words === undefined ? {} : { words: true }),
      },
      queue: new AsyncQueue<Buffer>(),
      slot: undefined,
      finished: false,
      ...(words === undefined ? {} : { words }),
    };
    const onAbort = (): void => this.#cancel(job, new AbortError());
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#pending.push(job);
    this.#pump();
    try {
      yield* job.queue;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // The consumer stopped early (break, throw): stop eSpeak too.
      this.#cancel(job, new AbortError());
    }
  }

  /** Starts every worker and waits until each has loaded eSpeak. */
  async warmUp(): Promise<void> {
    if (this.#closed) throw new EngineError(EngineErrorCode.closed, 'espeak engine is closed');
    this.#warming++;
    try {
      while (this.#slots.size < this.#size) this.#spawn(this.#warmUpRounds);
      this.#updateRefs();
      await Promise.all([...this.#slots].map((slot) => slot.ready));
    } finally {
      this.#warming--;
      this.#updateRefs();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const error = new EngineError(EngineErrorCode.closed, 'espeak engine closed');
    for (const job of this.#pending.splice(0)) job.queue.fail(error);
    const slots = [...this.#slots];
    this.#slots.clear();
    for (const slot of slots) {
      slot.state = SlotState.dead;
      slot.job?.queue.fail(error);
      slot.job = undefined;
    }
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  #cancel(job: Job, error: unknown): void {
    job.queue.fail(error); // no-op when the consumer already stopped or the queue ended
    if (job.finished) return;
    job.finished = true;
    if (job.slot === undefined) {
      const index = this.#pending.indexOf(job);
      if (index >= 0) this.#pending.splice(index, 1);
    } else {
      // The slot stays busy until the worker confirms with 'done'.
      Atomics.store(job.slot.cancel, 0, job.request.id);
    }
    this.#updateRefs();
  }

  #pump(): void {
    if (this.#closed) return;
    for (const slot of this.#slots) {
      if (this.#pending.length === 0) break;
      if (slot.state !== SlotState.idle) continue;
      const job = this.#pending.shift() as Job;
      job.slot = slot;
      slot.job = job;
      slot.state = SlotState.busy;
      slot.worker.postMessage(job.request);
    }
    const starting = [...this.#slots].filter((slot) => slot.state === SlotState.starting).length;
    // Start workers only for work no running one will take.
    // A request is waiting: serve it at once rather than warm the JIT first.
    for (let i = starting; i < this.#pending.length && this.#slots.size < this.#size; i++) this.#spawn(0);
    this.#updateRefs();
  }

  #spawn(warmUpRounds: number): Slot {
    const moduleFile = locateModule();
    if (moduleFile === undefined) {
      throw new EngineError(EngineErrorCode.generationFailed, `${PACKAGE} is not installed`);
    }
    const cancel = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    const worker = new Worker(ESPEAK_WORKER_SOURCE, {
      eval: true,
      workerData: { moduleUrl: pathToFileURL(moduleFile).href, cancel, warmUpRounds },
      name: 'voxpipe-espeak',
      // The eval'd source is CommonJS; a parent started with --input-type=module
      // would hand that flag down and make the worker parse it as ESM.
      execArgv: process.execArgv.filter((arg) => !arg.startsWith('--input-type')),
    });
    let markReady!: () => void;
    let markFailed!: (error: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    ready.catch(() => undefined); // observed by warmUp() when someone waits
    const slot: Slot = { worker, cancel: new Int32Array(cancel), state: SlotState.starting, job: undefined, ready };
    this.#slots.add(slot);

    const fail = (message: string, cause?: unknown): void => {
      if (slot.state === SlotState.dead) return;
      const wasStarting = slot.state === SlotState.starting;
      slot.state = SlotState.dead;
      this.#slots.delete(slot);
      const error = new EngineError(EngineErrorCode.generationFailed, message, cause === undefined ? {} : { cause });
      markFailed(error);
      if (slot.job) {
        slot.job.finished = true;
        slot.job.queue.fail(error);
        slot.job = undefined;
      }
      void worker.terminate();
      if (wasStarting) {
        // eSpeak cannot load: fail what waits rather than respawn in a loop.
        for (const job of this.#pending.splice(0)) {
          job.finished = true;
          job.queue.fail(error);
        }
      }
      this.#pump();
    };

    worker.on('message', (message: WorkerMessage) => {
      if (slot.state === SlotState.dead) return;
      switch (message.type) {
        case 'ready':
          slot.state = SlotState.idle;
          markReady();
          this.#pump();
          return;
        case 'chunk':
          if (slot.job?.request.id === message.id) {
            for (const word of message.words ?? []) {
              slot.job.words?.push({ charStart: word.at, length: word.length, startMs: word.ms });
            }
            if (message.pcm.byteLength > 0) slot.job.queue.push(Buffer.from(message.pcm));
          }
          return;
        case 'done':
        case 'error':
          if (slot.job?.request.id === message.id) {
            slot.job.finished = true;
            if (message.type === 'done') slot.job.queue.end();
            else slot.job.queue.fail(new EngineError(EngineErrorCode.generationFailed, `espeak: ${message.message}`));
            slot.job = undefined;
          }
          if (message.type === 'error' && message.fatal) return; // the worker exits; 'exit' cleans up
          if (slot.state === SlotState.busy) slot.state = SlotState.idle;
          this.#pump();
          return;
        case 'load-failed':
          fail(`espeak failed to load: ${message.message}`);
          return;
      }
    });
    worker.on('error', (error) => fail(`espeak worker crashed: ${error.message}`, error));
    worker.on('exit', (code) => fail(`espeak worker exited with code ${code}`));
    worker.unref();
    return slot;
  }

  /**
   * Workers hold the process open only while there is work: an idle warm
   * engine must not keep a CLI or a test run alive.
   */
  #updateRefs(): void {
    const busy = this.#warming > 0 || this.#pending.length > 0;
    for (const slot of this.#slots) {
      if (busy || slot.state === SlotState.busy) slot.worker.ref();
      else slot.worker.unref();
    }
  }
}
