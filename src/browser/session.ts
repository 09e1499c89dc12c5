/**
 * The reliable machine in a browser: the same `ReliableMachine` and the same
 * driver (`realtime/driver.ts`) as Node's `ReliableSession`, with what the
 * browser plugs in (`link.ts`): its `WebSocket` with a fresh ticket per
 * connection, and the page's callbacks for what needs the API key the
 * browser never holds (the request-status read of the resume path). The
 * driver's own ledger (`SpliceLedger`: the layout is `ready`'s, so no
 * layout check and no stream probes in the bundle) strips the stream header
 * and splices a resumed segment, so the page hears one unbroken stream.
 */
import { AbortError, type VoxpipeError } from '../errors.js';
import type { StartRequest } from '../protocol/events.js';
import { browserLink, browserReads, type BrowserLinkOptions, type BrowserReadsOptions } from './link.js';
import { ReliableMachine } from '../realtime/reliable/machine.js';
import type { MachineEvent, MachineInput, MachineOptions } from '../realtime/reliable/types.js';
import { defined } from '../defined.js';
import type { ReadyInfo } from '../transport.js';
import { Driver } from '../realtime/driver.js';
import type { SpliceLedger } from '../splice.js';

/**
 * The recovery bounds are the machine's (`MachineOptions`, documented there
 * once; `statusTimeoutMs` bounds `getStatus`).
 */
export interface BrowserSessionOptions extends Pick<MachineOptions, 'maxRetries' | 'maxResumeMs' | 'progressTimeoutMs' | 'finishTimeoutMs' | 'statusTimeoutMs' | 'maxStallResumes'>, BrowserLinkOptions, BrowserReadsOptions {
  request: StartRequest;
  requestId: string;
}

/** Audio for the page, in order: what the ledger made of the machine's raw audio. */
export interface SessionAudio {
  segmentId: string;
  data: Uint8Array;
}

export interface BrowserSessionEvents {
  ready(info: ReadyInfo): void;
  audio(audio: SessionAudio): void;
  event(event: MachineEvent): void;
}

/** One realtime reliable request over browser WebSockets. */
export class BrowserSession {
  readonly #driver: Driver<ReliableMachine>;
  #connections = 0;

  /** The one ledger of the request's audio: what the page has of each segment (the speech core reads its counts). */
  get ledger(): SpliceLedger {
    // A browser session is never bound to another ledger: the driver's own is the one.
    return this.#driver.ownLedger!;
  }

  constructor(options: BrowserSessionOptions, on: BrowserSessionEvents) {
    // The machine's options pass through by construction: all but what the link and the reads use.
    const { wsUrl: _wsUrl, getTicket: _getTicket, getStatus: _getStatus, getSegmentAudio: _getSegmentAudio, connectTimeoutMs: _connectTimeoutMs, ...machine } = options;
    const machineOptions: MachineOptions = { ...defined(machine), eventIdPrefix: `ev-${Math.random().toString(36).slice(2, 10)}` };
    this.#driver = new Driver(
      {
        machine: (port) => new ReliableMachine(machineOptions, port),
        link: browserLink(options, () => this.#connections++),
        reads: browserReads(options),
        requestId: options.requestId,
      },
      // The page's callbacks are the driver's owner; a segment that restarts (mp3, opus) is not announced to the page.
      { ...on, discontinuity: () => undefined },
    );
  }

  /** Connections opened (the first and each resume). */
  get connections(): number {
    return this.#connections;
  }

  /** The page's inputs (`open`, `segment-queued`, `stop-requested`); the machine's events say how each ends. */
  handle(input: MachineInput): void {
    this.#driver.machine.handle(input);
  }

  /** Drop the socket as a network failure would (no close frame): the machine resumes. For demos and tests. */
  dropConnection(): void {
    this.#driver.dropConnection();
  }

  abort(reason: VoxpipeError = new AbortError()): void {
    this.#driver.abort(reason);
  }
}
