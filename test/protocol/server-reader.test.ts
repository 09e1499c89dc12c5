/**
 * The client's tolerant reader: what it requires, what it renames,
 * what it passes through, what it skips.
 */
import { describe, expect, it } from 'vitest';
import { ExtData, encode } from '@msgpack/msgpack';
import { readServerFrame, encodeFrame } from '../../src/protocol/codec.js';
import { readRequestStatus, readServerEvent } from '../../src/protocol/server-reader.js';

describe('readServerEvent', () => {
  it('passes an unknown finish.reason and ready.format through as strings', () => {
    expect(readServerEvent({ event: 'finish', reason: 'cancelled_by_operator' })).toMatchObject({ kind: 'event', event: { reason: 'cancelled_by_operator', units: 0 } });
    expect(readServerEvent({ event: 'ready', format: 'flac' })).toMatchObject({ kind: 'event', event: { format: 'flac' } });
  });

  it('reads authenticated.quota from a number or an object, else NaN', () => {
    expect(readServerEvent({ event: 'authenticated', quota: 7 })).toMatchObject({ event: { quota: 7 } });
    expect(readServerEvent({ event: 'authenticated', quota: { remaining: 9, unit: 'credits' } })).toMatchObject({ event: { quota: 9 } });
    const none = readServerEvent({ event: 'authenticated' });
    expect(none.kind === 'event' && none.event.event === 'authenticated' && Number.isNaN(none.event.quota)).toBe(true);
  });

  it('an unknown event is skipped with a message naming it', () => {
    expect(readServerEvent({ event: 'server_stats', queue_depth: 1 })).toEqual({ kind: 'skip', name: 'server_stats', message: expect.stringContaining('server_stats') });
  });

  it.each([
    ['audio without bytes', { event: 'audio', segment_id: 's', sequence: 1, audio: 'AAAA' }],
    ['audio without sequence', { event: 'audio', segment_id: 's', audio: new Uint8Array(2) }],
    ['finish without reason', { event: 'finish', units: 1 }],
    ['request_status without state', { event: 'request_status' }],
    ['no event name', { type: 'audio' }],
  ])('%s is unusable (invalid_server_frame)', (_name, map) => {
    const read = readServerEvent(map);
    expect(read.kind).toBe('unusable');
    expect(read.kind === 'unusable' && read.error.code).toBe('invalid_server_frame');
  });

  it('an input_ack whose sequence is under no known name is read by order: no sequence, and the field named as missing', () => {
    for (const map of [
      { event: 'input_ack', acknowledged_text_ordinal: 3, characters: 5 },
      { event: 'input_ack', ack: { frame_no: 3 } },
      { event: 'input_ack' },
    ]) {
      const read = readServerEvent(map);
      expect(read).toMatchObject({ kind: 'event', missing: 'input_ack.sequence', event: { event: 'input_ack' } });
      expect(read.kind === 'event' && 'sequence' in read.event).toBe(false);
    }
  });

  it.each([
    ['another case', { ACCEPTED_SEQUENCE: 4 }],
    ['other separators', { 'accepted-sequence': 4 }],
    ['a prefix word', { svc_sequence: 4 }],
    ['a camel-case prefix', { ackSequence: 4 }],
    ['a nested map', { accepted: { sequence: 4 } }],
    ['a nested map whose words join to a known name', { accepted: { seq: 4 } }],
    ['two levels down', { data: { ack: { sequence: 4 } } }],
    ['a float', { sequence: 4.0 }],
    ['a bigint', { sequence: 4n }],
    ['a numeric string', { sequence: '4' }],
  ])('finds the acked sequence under %s', (_how, fields) => {
    expect(readServerEvent({ event: 'input_ack', ...fields })).toMatchObject({ kind: 'event', event: { sequence: 4 } });
  });

  it('a known name of another field is never taken after a prefix (buffered_characters is not characters)', () => {
    expect(readServerEvent({ event: 'input_ack', sequence: 1, buffered_characters: 9 })).toMatchObject({ event: { characters: 0, buffered_characters: 9 } });
  });

  it('a segment_completed that names no segment reads as segment \'\' (the open one) without a byte count', () => {
    const read = readServerEvent({ event: 'segment_completed', clip_handle: 'seg-1', units: 1, audio_bytes: 10 });
    expect(read).toMatchObject({ kind: 'event', missing: 'segment_completed.segment_id', event: { segment_id: '', units: 1 } });
    expect(read.kind === 'event' && 'audio_bytes' in read.event).toBe(false);
  });

  it('audio under another name is the frame\'s one binary field; segment and sequence under other spellings', () => {
    const read = readServerEvent({ event: 'audio', PCM_CHUNK: new Uint8Array([1, 2]), 'Segment-ID': 'g', meta: { seq: 2 } });
    expect(read).toMatchObject({ kind: 'event', event: { audio: new Uint8Array([1, 2]), segment_id: 'g', sequence: 2 } });
  });

  it('MessagePack extension values in any field decode (timestamp as a Date, others as ExtData) and do not stop the frame', () => {
    // Encoded by the library's own encoder: a Date is the timestamp extension (-1), ExtData any other type.
    const frame = encode({ event: 'input_ack', sequence: 2, timestamp: new Date(1_700_000_000_123), vendor: new ExtData(7, new Uint8Array([1, 2, 3])), nested: { at: new Date(0), raw: new ExtData(42, new Uint8Array(200)) } });
    const read = readServerFrame(frame);
    expect(read).toMatchObject({ kind: 'event', event: { event: 'input_ack', sequence: 2 } });
    expect(read.kind === 'event' && read.event['vendor']).toBeInstanceOf(ExtData);
    // A timestamp extension of a size MessagePack does not define is kept as ExtData, not an error.
    const odd = Uint8Array.from([0x82, 0xa5, ...Buffer.from('event'), 0xa4, ...Buffer.from('pong'), 0xa1, 0x74, 0xd5, 0xff, 0x01, 0x02]);
    expect(readServerFrame(odd)).toMatchObject({ kind: 'event', event: { event: 'pong', t: expect.any(ExtData) } });
  });

  it('keeps unknown fields and the canonical audio frame untouched', () => {
    const frame = { event: 'audio', event_id: 'e', trace_id: 't', timestamp: 1, request_id: 'r', session_id: 's', segment_id: 'g', sequence: 3, audio: new Uint8Array([1]), format: 'pcm', extra: true };
    const read = readServerFrame(encodeFrame(frame));
    expect(read).toMatchObject({ kind: 'event', event: frame });
  });

  it('an error with no usable code reads as server_error and keeps the raw value', () => {
    expect(readServerEvent({ event: 'error', code: '', message: 'boom' })).toMatchObject({ event: { code: 'server_error', raw_code: '', retryable: false, terminal: true } });
    expect(readServerEvent({ event: 'error', code: 17 })).toMatchObject({ event: { code: '17' } });
  });

  it('a segment\'s audio bytes are read under any of their names; unknown stays absent, never 0', () => {
    for (const name of ['audio_bytes', 'bytes', 'audio_size_bytes', 'audio_length']) {
      expect(readServerEvent({ event: 'segment_completed', segment_id: 's', units: 1, [name]: 12 })).toMatchObject({ event: { audio_bytes: 12 } });
      expect(readServerEvent({ event: 'usage', segment_id: 's', [name]: 12 })).toMatchObject({ event: { audio_bytes: 12 } });
    }
    for (const map of [{ event: 'segment_completed', segment_id: 's', units: 1 }, { event: 'usage', segment_id: 's' }, { event: 'segment_completed', segment_id: 's', audio_bytes: -3 }]) {
      const read = readServerEvent(map);
      expect(read.kind === 'event' && 'audio_bytes' in read.event).toBe(false);
    }
  });

  it('an undecodable frame is unusable, naming the problem', () => {
    const read = readServerFrame(Uint8Array.from([0x81, 0xc1, 0x00]));
    expect(read).toMatchObject({ kind: 'unusable', error: { code: 'invalid_server_frame', message: expect.stringContaining('MessagePack') } });
  });
});

describe('readRequestStatus', () => {
  it('reads a manifest without index and with url, in listed order; entries without an id are left out', () => {
    const status = readRequestStatus({
      request_id: 'r',
      state: 'failed_retryable',
      result_available: true,
      segments: [{ segment_id: 'a', state: 'completed', url: '/a' }, { note: 'no id' }, { segmentId: 'b', status: 'accepted' }],
    });
    expect(status).toMatchObject({ state: 'failed_retryable', retryable: true, segments: [{ segment_id: 'a', audio_url: '/a', state: 'completed' }, { segment_id: 'b', state: 'accepted' }] });
  });

  it('a body without state is an error, not a guess', () => {
    expect(readRequestStatus({ request_id: 'r' })).toMatchObject({ code: 'invalid_server_frame' });
  });
});
