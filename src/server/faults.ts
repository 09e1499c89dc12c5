/**
 * Fault injection for tests: off unless asked for (`serve --faults JSON` or
 * `server.faults.set(...)`). Each armed fault fires `times` times (default 1)
 * and then disarms itself, so a test that injects one failure sees one.
 */

export interface CloseFault {
  /** Close after this many `audio` frames have been sent on the connection. */
  afterAudioFrames: number;
  /** WebSocket close code, e.g. 1012. */
  code: number;
  times?: number;
}

export interface ErrorFault {
  afterAudioFrames: number;
  /** Error code, default `provider_unavailable`. */
  code?: string;
  /** Default true. */
  retryable?: boolean;
  times?: number;
}

export interface DropFault {
  /** Destroy the TCP socket (no close frame) after this many `audio` frames. */
  afterAudioFrames: number;
  times?: number;
}

export interface EngineFault {
  /** Only generations whose text includes this substring fail (default: any). */
  match?: string;
  /** Fail after this many chunks were produced (default 0: before any audio). */
  afterChunks?: number;
  times?: number;
}

/** A fault that only counts its firings. */
export interface QuietFault {
  times?: number;
}

export interface FaultPlan {
  realtimeClose?: CloseFault;
  realtimeError?: ErrorFault;
  realtimeDrop?: DropFault;
  /** Extra delay before every engine chunk, in ms. */
  latencyMs?: number;
  engineFailure?: EngineFault;
  /** Realtime: a `segment_completed` is not sent (its audio and `usage` are); the connection stays open and answers pings. */
  withholdSegmentCompleted?: QuietFault;
  /** Realtime: after `stop`, neither `finish` nor the close that follows it (the request is completed all the same). */
  noFinishAfterStop?: QuietFault;
  /** Realtime: an `input_ack` carries a sequence the client never sent (its own plus 1,000). */
  bogusAckSequence?: QuietFault;
  /** Realtime: a `segment_completed` names a segment id that matches nothing the client sent. */
  unknownCompletedSegmentId?: QuietFault;
  /** The request-status route (`GET {rt_http_url}/v2/tts/requests/{id}`) never answers: the response is held until the client goes. */
  statusRouteHangs?: QuietFault;
}

type Armed = { [K in keyof FaultPlan]?: FaultPlan[K] extends infer F ? (F extends { times?: number } ? F & { remaining: number } : F) : never };

export class Faults {
  #armed: Armed = {};

  /** Arm the faults of `plan` (replacing those of the same kind). */
  set(plan: FaultPlan): void {
    for (const [key, value] of Object.entries(plan) as [keyof FaultPlan, unknown][]) {
      if (value === undefined) continue;
      if (typeof value === 'object' && value !== null) {
        const f = value as { times?: number };
        (this.#armed as Record<string, unknown>)[key] = { ...f, remaining: f.times ?? 1 };
      } else {
        (this.#armed as Record<string, unknown>)[key] = value;
      }
    }
  }

  clear(): void {
    this.#armed = {};
  }

  get latencyMs(): number {
    return this.#armed.latencyMs ?? 0;
  }

  /** The armed fault of `kind`, without consuming it. */
  peek<K extends Exclude<keyof FaultPlan, 'latencyMs'>>(kind: K): FaultPlan[K] | undefined {
    return this.#armed[kind] as FaultPlan[K] | undefined;
  }

  /**
   * The realtime event faults on one server event: the body to send instead,
   * or `undefined` to send nothing.
   */
  rewriteEvent(name: string, body: Record<string, unknown>): Record<string, unknown> | undefined {
    if (name === 'segment_completed') {
      if (this.take('withholdSegmentCompleted')) return undefined;
      if (this.take('unknownCompletedSegmentId')) return { ...body, segment_id: `unknown-${String(body['segment_id'])}` };
    }
    if (name === 'input_ack' && this.take('bogusAckSequence')) return { ...body, sequence: Number(body['sequence']) + 1_000 };
    return body;
  }

  /** Consume one firing of `kind` when `when(fault)` holds; returns the fault that fired. */
  take<K extends Exclude<keyof FaultPlan, 'latencyMs'>>(kind: K, when: (fault: NonNullable<FaultPlan[K]>) => boolean = () => true): NonNullable<FaultPlan[K]> | undefined {
    const armed = this.#armed[kind] as (NonNullable<FaultPlan[K]> & { remaining: number }) | undefined;
    if (!armed || armed.remaining <= 0 || !when(armed)) return undefined;
    armed.remaining--;
    if (armed.remaining <= 0) delete this.#armed[kind];
    return armed;
  }
}
