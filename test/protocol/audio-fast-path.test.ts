/**
 * parseServerEvent accepts well-formed `audio` events without the schema (the
 * hot path). It must accept and refuse exactly what AudioEventSchema does.
 */
import { describe, expect, it } from 'vitest';
import { parseServerEvent } from '../../src/protocol/codec.js';
import { AudioEventSchema } from '../../src/protocol/events.js';

const valid = {
  event: 'audio', event_id: 'e1', trace_id: 't1', timestamp: 1_700_000_000_000, request_id: 'r1', session_id: 's1',
  segment_id: 'g1', sequence: 3, audio: new Uint8Array([1, 2, 3]), format: 'pcm', sample_rate: 24_000, channels: 1, bit_depth: 16,
};

const variants: [string, Record<string, unknown>][] = [
  ['valid', valid],
  ['valid with in_reply_to and an extra field', { ...valid, in_reply_to: 'c1', extra: 'kept' }],
  ['valid without pcm metadata', { ...valid, sample_rate: undefined, channels: undefined, bit_depth: undefined, format: 'mp3' }],
  ['audio as a string', { ...valid, audio: 'AQID' }],
  ['unknown format', { ...valid, format: 'flac' }],
  ['sequence as a string', { ...valid, sequence: '3' }],
  ['NaN timestamp', { ...valid, timestamp: Number.NaN }],
  ['infinite sequence', { ...valid, sequence: Number.POSITIVE_INFINITY }],
  ['missing segment_id', { ...valid, segment_id: undefined }],
  ['numeric request_id', { ...valid, request_id: 7 }],
  ['in_reply_to as a number', { ...valid, in_reply_to: 5 }],
  ['sample_rate as a string', { ...valid, sample_rate: '24000' }],
];

describe('audio fast path', () => {
  it.each(variants)('%s: same verdict and value as the schema', (_name, raw) => {
    const map = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
    const schema = AudioEventSchema.safeParse(map);
    if (schema.success) {
      expect(parseServerEvent(map)).toEqual(schema.data);
    } else {
      expect(() => parseServerEvent(map)).toThrow();
    }
  });
});
