/**
 * The realtime side of a random dialect (`dialect-random.ts`): one rewriter
 * per connection turns each event our server makes into the frames the
 * drawn deployment would send: other spellings, envelope fields left out,
 * timestamps of another type (a MessagePack timestamp extension among
 * them), whole numbers in wider or float encodings, audio renumbered (start,
 * scope, gaps) and cut into other frame sizes, unknown events and fields
 * (extension values among them). The audio bytes and their order never
 * change: only how they are framed, numbered, named and encoded.
 */
import { Encoder, ExtData } from '@msgpack/msgpack';
import type { RealtimeDraw, Rng } from './dialect-random.js';
import { pick, rng, UNKNOWN_NAMES } from './dialect-random.js';

/** Turns one event into the frames to send (usually one; none holds or drops it; more adds events). */
export type RealtimeRewriter = (event: Record<string, unknown>) => Record<string, unknown>[];

/**
 * A whole number to be written in a MessagePack encoding of the dialect's
 * choosing rather than the smallest one: the same number, as a legal
 * deployment may write it (`encodeDrawnFrame`).
 */
export class DrawnNumber {
  constructor(
    readonly value: number,
    readonly as: 'float64' | 'float32' | 'uint32' | 'uint64' | 'int64',
  ) {}
}

/** A value of an unknown field: any MessagePack type, extensions included, nested. `binary`: may be bytes at the top. */
function unknownValue(r: Rng, binary = true): unknown {
  return pick(r, [
    () => 'x',
    () => Math.floor(r() * 1e6),
    () => r() * 100,
    () => null,
    () => r() < 0.5,
    () => ({ nested: { deeper: [1, 'two', { three: 3 }] }, at: Date.now(), when: new Date() }),
    () => ['a', 2, null, new ExtData(3, new Uint8Array([9]))],
    () => (binary ? new Uint8Array([1, 2, 3]) : { blob: new Uint8Array([1, 2, 3]) }),
    () => new Date(),
    () => new ExtData(Math.floor(r() * 128), new Uint8Array(Math.floor(r() * 40))),
  ])();
}

function withUnknownFields(r: Rng, map: Record<string, unknown>, share: number, binary = true): Record<string, unknown> {
  if (share <= 0 || r() >= share) return map;
  const out = { ...map };
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) {
    const name = pick(r, UNKNOWN_NAMES.fields);
    if (!(name in out)) out[name] = unknownValue(r, binary);
  }
  return out;
}

/** `map` with its fields spelt as `names` says; a dotted spelling nests the field in a map (`payload.seq`). */
function rename(map: Record<string, unknown>, names: Record<string, string> | undefined): Record<string, unknown> {
  if (!names) return map;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(map)) {
    const to = names[k];
    if (to === undefined) {
      out[k] = v;
      continue;
    }
    const [head, leaf] = to.split('.', 2) as [string, string | undefined];
    // A spelling another field of this event already has keeps our own name (a deployment would not send two).
    if (head in map) out[k] = v;
    else if (leaf === undefined) out[head] = v;
    else out[head] = { ...(out[head] as Record<string, unknown> | undefined), [leaf]: v };
  }
  return out;
}

function timestampOf(ms: number, type: RealtimeDraw['timestamps']): unknown {
  if (type === 'numeric-string') return String(ms);
  if (type === 'iso') return new Date(ms).toISOString();
  if (type === 'ext') return new Date(ms);
  return ms;
}

/** Whole numbers of `map` (nested too) in encodings drawn from `r`. */
function varyNumbers(r: Rng, value: unknown): unknown {
  if (typeof value === 'number' && Number.isSafeInteger(value)) {
    const as = pick(r, ['smallest', 'float64', 'uint32', 'uint64', 'int64', 'float32'] as const);
    if (as === 'smallest' || (value < 0 && (as === 'uint32' || as === 'uint64')) || (as === 'uint32' && value > 0xffffffff) || (as === 'float32' && Math.abs(value) > 2 ** 24)) return value;
    return new DrawnNumber(value, as);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = varyNumbers(r, v);
  return out;
}

const encoder = new Encoder({ ignoreUndefined: true });

/** The MessagePack type byte of each drawn encoding. */
const NUMBER_TYPE_BYTE: Record<DrawnNumber['as'], number> = { float64: 0xcb, float32: 0xca, uint32: 0xce, uint64: 0xcf, int64: 0xd3 };

/** `DrawnNumber` in its encoding; anything else as the library writes it. */
function encodeValue(value: unknown, parts: Uint8Array[]): void {
  if (value instanceof DrawnNumber) {
    const b = Buffer.alloc(value.as === 'float32' || value.as === 'uint32' ? 5 : 9);
    b[0] = NUMBER_TYPE_BYTE[value.as];
    if (value.as === 'float64') b.writeDoubleBE(value.value, 1);
    else if (value.as === 'float32') b.writeFloatBE(value.value, 1);
    else if (value.as === 'uint32') b.writeUInt32BE(value.value, 1);
    else if (value.as === 'uint64') b.writeBigUInt64BE(BigInt(value.value), 1);
    else b.writeBigInt64BE(BigInt(value.value), 1);
    parts.push(b);
    return;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    parts.push(entries.length < 16 ? Uint8Array.of(0x80 | entries.length) : Uint8Array.of(0xde, entries.length >> 8, entries.length & 0xff));
    for (const [k, v] of entries) {
      parts.push(encoder.encode(k));
      encodeValue(v, parts);
    }
    return;
  }
  parts.push(encoder.encode(value));
}

/** One frame as the drawn deployment writes it: standard MessagePack, with `DrawnNumber`s in their drawn encodings. */
export function encodeDrawnFrame(frame: Record<string, unknown>): Uint8Array {
  const parts: Uint8Array[] = [];
  encodeValue(frame, parts);
  return Buffer.concat(parts);
}

/**
 * The shared part of a dialect's realtime side: the sequence counters of
 * scope `request` outlive a connection (a resumed request goes on counting).
 */
export function randomRealtime(draw: RealtimeDraw, seed: string): () => RealtimeRewriter {
  const perRequest = new Map<string, number>();
  let connections = 0;
  return () => connectionRewriter(draw, rng(seed, `connection-${++connections}`), perRequest);
}

function connectionRewriter(draw: RealtimeDraw, r: Rng, perRequest: Map<string, number>): RealtimeRewriter {
  const perScope = new Map<string, number>();
  const seq = draw.sequence;
  const nextSequence = (frame: Record<string, unknown>): number => {
    const key = seq.scope === 'segment' ? String(frame['segment_id']) : seq.scope === 'request' ? String(frame['request_id']) : '';
    const counters = seq.scope === 'request' ? perRequest : perScope;
    const last = counters.get(key);
    const step = seq.step === 'random' ? 1 + Math.floor(r() * 4) : seq.step;
    const n = last === undefined ? seq.start : last + step;
    counters.set(key, n);
    return n;
  };

  /** Audio held back to be merged with the next frame of its segment. */
  let held: Record<string, unknown> | undefined;
  let heldCount = 0;
  const release = (): Record<string, unknown>[] => {
    if (!held) return [];
    const out = held;
    held = undefined;
    heldCount = 0;
    return [out];
  };

  /** The audio frames the server's one frame becomes (before numbering). */
  const cut = (event: Record<string, unknown>): Record<string, unknown>[] => {
    const frames = draw.frames;
    const audio = event['audio'] as Uint8Array;
    if (frames.kind === 'split') {
      if (audio.length <= frames.bytes) return [event];
      const out: Record<string, unknown>[] = [];
      for (let at = 0; at < audio.length; at += frames.bytes) out.push({ ...event, audio: audio.subarray(at, at + frames.bytes) });
      return out;
    }
    if (frames.kind === 'merge') {
      if (held && held['segment_id'] === event['segment_id'] && held['format'] === event['format']) {
        const a = held['audio'] as Uint8Array;
        const joined = new Uint8Array(a.length + audio.length);
        joined.set(a);
        joined.set(audio, a.length);
        held = { ...held, audio: joined };
        heldCount++;
      } else {
        const before = release();
        held = event;
        heldCount = 1;
        if (heldCount >= frames.count) return [...before, ...release()];
        return before;
      }
      return heldCount >= frames.count ? release() : [];
    }
    return [event];
  };

  const dress = (frame: Record<string, unknown>): Record<string, unknown> => {
    const name = String(frame['event']);
    let out: Record<string, unknown> = frame;
    if (name === 'authenticated' && typeof frame['quota'] === 'number') {
      if (draw.quota === 'object') out = { ...out, quota: { remaining: frame['quota'], unit: 'credits' } };
      else if (draw.quota === 'string') out = { ...out, quota: String(frame['quota']) };
    }
    out = rename(out, draw.spellings[name]);
    out = rename(out, draw.unread[name]);
    const env = draw.envelope;
    const keep = (presence: 'always' | 'never' | 'sometimes') => presence === 'always' || (presence === 'sometimes' && r() < 0.5);
    if (out === frame) out = { ...frame };
    if (!keep(env.event_id)) delete out['event_id'];
    if (!keep(env.trace_id)) delete out['trace_id'];
    if (!keep(env.timestamp)) delete out['timestamp'];
    else if (typeof out['timestamp'] === 'number') out['timestamp'] = timestampOf(out['timestamp'], draw.timestamps);
    if (draw.numbers === 'varied') out = varyNumbers(r, out) as Record<string, unknown>;
    // Audio under a name no reader knows is the frame's one binary field: unknown bytes then go nested.
    const audioUnnamed = name === 'audio' && (draw.spellings['audio']?.['audio'] ?? 'audio') !== 'audio';
    return withUnknownFields(r, out, draw.unknownFields, !audioUnnamed);
  };

  const unknownEvent = (): Record<string, unknown>[] => {
    if (draw.unknownEvents <= 0 || r() >= draw.unknownEvents) return [];
    return [withUnknownFields(r, { event: pick(r, UNKNOWN_NAMES.events), event_id: `x-${Math.floor(r() * 1e9)}`, timestamp: Date.now(), value: unknownValue(r) }, draw.unknownFields)];
  };

  return (event) => {
    const name = String(event['event']);
    const frames: Record<string, unknown>[] = [];
    if (name === 'audio') {
      for (const f of cut(event)) frames.push({ ...f, sequence: nextSequence(f) });
    } else {
      for (const f of release()) frames.push({ ...f, sequence: nextSequence(f) });
      frames.push(event);
    }
    return frames.flatMap((f) => [...unknownEvent(), dress(f)]);
  };
}
