/**
 * The journal of reliable-mode requests (spec 3.5), kept in the store's
 * `realtime-requests` collection and keyed by site, account and
 * `request_id`: another account's request of the same id is another record,
 * and is never visible.
 */
import type { AudioFormat } from '../../protocol/audio.js';
import { RequestState } from '../../protocol/constants.js';
import type { StartRequest } from '../../protocol/events.js';
import type { Collection, Store } from '../store/types.js';
import { REALTIME_TUNING } from './tuning.js';

/** Journal state of one segment. */
export const SegmentState = { accepted: 'accepted', completed: 'completed', failed: 'failed' } as const;
export type SegmentState = (typeof SegmentState)[keyof typeof SegmentState];

/** One segment of a request, in flush order. */
export interface JournalSegment {
  segmentId: string;
  /** Order within the request, from 0. */
  index: number;
  /** The full text, compared on a retried flush. */
  text: string;
  characters: number;
  state: SegmentState;
  /** Units charged (committed) for the segment; 0 until its first audio. */
  units: number;
  /** Bytes of audio sent for it by the attempt that completed it (or the latest attempt). */
  audioBytes: number;
  /** Ledger refId of its reservation (reused by every retry unless a failed attempt was refunded). */
  refId: string;
  /** Complete audio of a completed segment, when kept (see REALTIME_TUNING.maxStoredAudioBytesPerRequest). */
  audio?: Buffer | undefined;
}

/** A reliable-mode request. */
export interface RequestRecord {
  requestId: string;
  userId: string;
  site: string;
  state: RequestState;
  /** The `start.request` as first given; a retry must repeat it. */
  request: StartRequest;
  format: AudioFormat;
  segments: JournalSegment[];
  /** Session of the connection generating it while `running`. */
  ownerSessionId: string | undefined;
  /** The process of that connection, when several share the store (`SharedProcesses.ownerId`). */
  ownerProcess?: string | undefined;
  /** Why it failed, for the status route. */
  failure: { code: string; message: string } | undefined;
  createdAt: string;
  updatedAt: string;
}

/** Units charged for the whole request (committed segments). */
export function requestUnits(record: RequestRecord): number {
  return record.segments.reduce((n, s) => n + s.units, 0);
}

/** True when a completed request, or completed segments, can be read back. */
export function resultAvailable(record: RequestRecord): boolean {
  return record.state === RequestState.completed || record.segments.some((s) => s.state === SegmentState.completed);
}

/** Bytes of audio kept for the manifest across the request's segments. */
export function storedAudioBytes(record: RequestRecord | StoredRecord): number {
  return record.segments.reduce((n, s: JournalSegment & StoredSegment) => n + (s.audio?.length ?? s.keptAudioBytes ?? 0), 0);
}

/**
 * What the store keeps of a segment: its audio goes to the `realtime-audio`
 * collection, written once, so the record (saved at every step of the
 * request) stays small for a store that writes it out (SQL).
 */
type StoredSegment = Omit<JournalSegment, 'audio'> & { keptAudioBytes?: number };
type StoredRecord = Omit<RequestRecord, 'segments'> & { segments: StoredSegment[] };

/** Reliable requests of one site, per account. */
function finished(record: RequestRecord): boolean {
  return record.state !== RequestState.running;
}

export class RequestStore {
  readonly #records: Collection<StoredRecord>;
  readonly #audio: Collection<Buffer>;
  readonly #ledger: Store['ledger'];
  /** Finished requests by key, oldest first, with the audio bytes each keeps: what retention evicts. */
  readonly #finished = new Map<string, { atMs: number; bytes: number }>();
  #finishedBytes = 0;

  /** This process, on the records it generates (a store shared by several processes), else undefined. */
  readonly ownerProcess: string | undefined;

  /** `now`: the server's clock (`ctx.now`). */
  constructor(store: Store, private readonly site: string, private readonly now: () => Date = () => new Date()) {
    this.ownerProcess = store.processes?.ownerId;
    this.#records = store.collection<StoredRecord>('realtime-requests');
    this.#audio = store.collection<Buffer>('realtime-audio');
    this.#ledger = store.ledger;
    // A store that outlived its process: its finished requests age from when they finished.
    const old = [...this.#records.values()].filter((r) => r.site === site && finished(r)).sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
    for (const r of old) this.#track(this.#key(r.userId, r.requestId), Date.parse(r.updatedAt), storedAudioBytes(r));
  }

  /** Requests kept now (all states). */
  get size(): number {
    return this.#records.size;
  }

  #track(key: string, atMs: number, bytes: number): void {
    this.#untrack(key);
    this.#finished.set(key, { atMs, bytes });
    this.#finishedBytes += bytes;
  }

  #untrack(key: string): void {
    const entry = this.#finished.get(key);
    if (!entry) return;
    this.#finished.delete(key);
    this.#finishedBytes -= entry.bytes;
  }

  /** Forget finished requests past their retention, oldest first, and while their stored audio is over the bound. */
  #sweep(nowMs: number): void {
    for (const [key, entry] of this.#finished) {
      const expired = nowMs - entry.atMs > REALTIME_TUNING.requestRetentionMs;
      if (!expired && this.#finishedBytes <= REALTIME_TUNING.maxFinishedAudioBytes) break;
      this.#untrack(key);
      for (const seg of this.#records.get(key)?.segments ?? []) this.#audio.delete(this.#audioKey(key, seg.segmentId));
      this.#records.delete(key);
    }
  }

  #audioKey(key: string, segmentId: string): string {
    return JSON.stringify([key, segmentId]);
  }

  /** The record with its segments' audio, as the server works with it (a copy: change it, then `save`). */
  #merged(key: string, stored: StoredRecord): RequestRecord {
    return {
      ...stored,
      segments: stored.segments.map((seg: StoredSegment & { audio?: Buffer }) => {
        const { keptAudioBytes, ...rest } = seg;
        // (A record kept before the audio moved out holds it inline.)
        if (rest.audio !== undefined || keptAudioBytes === undefined) return rest;
        return { ...rest, audio: this.#audio.get(this.#audioKey(key, seg.segmentId)) };
      }),
    };
  }

  #key(userId: string, requestId: string): string {
    // JSON keeps the parts apart whatever characters a request_id holds.
    return JSON.stringify([this.site, userId, requestId]);
  }

  get(userId: string, requestId: string): RequestRecord | undefined {
    const key = this.#key(userId, requestId);
    const stored = this.#records.get(key);
    return stored && this.#merged(key, stored);
  }

  create(userId: string, requestId: string, request: StartRequest, format: AudioFormat, ownerSessionId: string): RequestRecord {
    const now = this.now().toISOString();
    const record: RequestRecord = {
      requestId,
      userId,
      site: this.site,
      state: RequestState.running,
      request,
      format,
      segments: [],
      ownerSessionId,
      ownerProcess: this.ownerProcess,
      failure: undefined,
      createdAt: now,
      updatedAt: now,
    };
    this.save(record);
    return record;
  }

  /** Records of this site still `running`. */
  running(): RequestRecord[] {
    return [...this.#records.values()].filter((r) => r.site === this.site && r.state === RequestState.running).map((r) => this.#merged(this.#key(r.userId, r.requestId), r));
  }

  /**
   * The one rule for a request that stops while segments are in flight (a
   * dropped connection, a dead process): those segments fail, and keep their
   * units only where a charge stands (a committed hold, of this attempt or an
   * earlier one); the request takes `state` with `failure`, loses its owner,
   * and is saved. `retry_failed` then resumes it with no second charge.
   */
  failInFlight(record: RequestRecord, inFlight: Iterable<number>, state: typeof RequestState.failedRetryable | typeof RequestState.failedTerminal, failure: { code: string; message: string } | undefined): void {
    for (const index of inFlight) {
      const segment = record.segments[index]!;
      segment.state = SegmentState.failed;
      if (this.#ledger.get(segment.refId)?.state !== 'committed') segment.units = 0;
    }
    record.state = state;
    record.failure = failure;
    record.ownerSessionId = undefined;
    record.ownerProcess = undefined;
    this.save(record);
  }

  /** Write a changed record back (its audio apart, each segment's once). */
  save(record: RequestRecord): void {
    const nowMs = this.now().getTime();
    record.updatedAt = new Date(nowMs).toISOString();
    const key = this.#key(record.userId, record.requestId);
    const segments: StoredSegment[] = record.segments.map(({ audio, ...seg }) => {
      if (audio === undefined) return seg;
      const audioKey = this.#audioKey(key, seg.segmentId);
      if (this.#audio.get(audioKey) !== audio) this.#audio.set(audioKey, audio);
      return { ...seg, keptAudioBytes: audio.length };
    });
    this.#records.set(key, { ...record, segments });
    if (finished(record)) this.#track(key, nowMs, storedAudioBytes(record));
    else this.#untrack(key);
    this.#sweep(nowMs);
  }
}
