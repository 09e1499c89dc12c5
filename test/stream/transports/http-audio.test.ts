import { describe, expect, it } from 'vitest';
import { buildWavHeader, parseWavHeader, WAV_UNKNOWN_SIZE } from '../../../src/sinks/wav-header.js';
import { id3v2Length, mp3Layout } from '../../../src/protocol/audio-probe.js';
import { rawPcmLayout, SegmentAudioAssembler, splitChunks } from '../../../src/stream/transports/http-audio.js';

const PCM = { sampleRate: 22_050, channels: 1, bitDepth: 16 };
const FALLBACK = { sampleRate: 24_000, channels: 1, bitDepth: 16 };

function wavFile(samples: Buffer, pcm = PCM, extraChunk = false): Buffer {
  const header = buildWavHeader(pcm, samples.length);
  if (!extraChunk) return Buffer.concat([header, samples]);
  // A LIST chunk between fmt and data, as many encoders write.
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([4, 0, 0, 0]), Buffer.from('INFO')]);
  const riff = Buffer.from(header.subarray(0, 36));
  riff.writeUInt32LE(riff.readUInt32LE(4) + list.length, 4);
  return Buffer.concat([riff, list, header.subarray(36), samples]);
}

describe('SegmentAudioAssembler', () => {
  it('pcm: strips each WAV header (extra chunks too) and keeps whole frames only', () => {
    const a = new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK });
    const s1 = Buffer.from([1, 2, 3, 4, 5, 6]);
    const s2 = Buffer.from([7, 8, 9, 10, 11]); // odd: last byte dropped
    expect(a.convert({ data: wavFile(s1), contentType: 'audio/wav' })).toEqual({ data: s1, pcm: PCM, headerBytes: 0, declaredBytes: 6 });
    // The data size of the header says 5 bytes; a trailing junk byte after it is not audio.
    expect(a.convert({ data: Buffer.concat([wavFile(s2, PCM, true), Buffer.from([99])]), contentType: 'audio/wav' }).data).toEqual(Buffer.from([7, 8, 9, 10]));
  });

  it('a WAV file cut short of its declared data size: declaredBytes says the whole, so the shortfall shows', () => {
    const a = new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK });
    const whole = wavFile(Buffer.from([1, 2, 3, 4, 5, 6]));
    const converted = a.convert({ data: whole.subarray(0, whole.length - 2), contentType: 'audio/wav' });
    expect(converted.data.length).toBe(4);
    expect(converted.declaredBytes).toBe(6);
  });

  it('wav: one streaming header before the first audio, raw PCM after', () => {
    const a = new SegmentAudioAssembler('wav', { fallbackPcm: FALLBACK });
    const first = a.convert({ data: wavFile(Buffer.from([1, 2, 3, 4])), contentType: 'audio/wav' });
    const header = parseWavHeader(first.data)!;
    expect(header.pcm).toEqual(PCM);
    expect(header.dataBytes).toBeUndefined(); // streaming: size unknown
    expect(first.data.readUInt32LE(4)).toBe(WAV_UNKNOWN_SIZE);
    expect(first.data.subarray(header.dataOffset)).toEqual(Buffer.from([1, 2, 3, 4]));
    const second = a.convert({ data: wavFile(Buffer.from([5, 6])), contentType: 'audio/wav' });
    expect(second.data).toEqual(Buffer.from([5, 6]));
  });

  it('wav without header (failover continuation) emits raw PCM from the start', () => {
    const a = new SegmentAudioAssembler('wav', { fallbackPcm: FALLBACK, wavHeader: false });
    expect(a.convert({ data: wavFile(Buffer.from([1, 2])), contentType: 'audio/wav' }).data).toEqual(Buffer.from([1, 2]));
  });

  it('raw PCM takes its layout from x-svc headers, then Content-Type parameters, then the fallback', () => {
    const file = (contentType: string, headers?: Record<string, string>) => ({ data: Buffer.alloc(4), contentType, headers: new Headers(headers) });
    expect(rawPcmLayout(file('audio/pcm', { 'x-svc-sample-rate': '16000', 'x-svc-channels': '2', 'x-svc-bit-depth': '16' }), FALLBACK)).toEqual({ sampleRate: 16_000, channels: 2, bitDepth: 16 });
    expect(rawPcmLayout(file('audio/pcm; rate=8000; channels=1'), FALLBACK)).toEqual({ sampleRate: 8_000, channels: 1, bitDepth: 16 });
    expect(rawPcmLayout(file('audio/pcm'), FALLBACK)).toEqual(FALLBACK);
  });

  it('refuses a compressed file for a PCM stream and a change of layout mid-stream', () => {
    const a = new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK });
    expect(() => a.convert({ data: Buffer.from([0xff, 0xfb, 0x90, 0x00]), contentType: 'audio/mpeg' })).toThrow(expect.objectContaining({ code: 'unexpected_audio_format' }));
    a.convert({ data: wavFile(Buffer.alloc(4)), contentType: 'audio/wav' });
    expect(() => a.convert({ data: wavFile(Buffer.alloc(4), { ...PCM, sampleRate: 44_100 }), contentType: 'audio/wav' })).toThrow(expect.objectContaining({ code: 'pcm_layout_changed' }));
  });

  it('mp3: keeps the first ID3 tag, drops the tags of later segments, reads the frame layout', () => {
    const id3 = Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 3, 0xaa, 0xbb, 0xcc]);
    // MPEG-2 Layer III, 24 kHz (index 1), mono.
    const frame = Buffer.from([0xff, 0xf3, 0x44, 0xc4, 1, 2, 3]);
    const file = Buffer.concat([id3, frame]);
    expect(id3v2Length(file)).toBe(13);
    expect(mp3Layout(file)).toEqual({ sampleRate: 24_000, channels: 1 });
    const a = new SegmentAudioAssembler('mp3', { fallbackPcm: FALLBACK });
    expect(a.convert({ data: file, contentType: 'audio/mpeg' }).data).toEqual(file);
    expect(a.convert({ data: file, contentType: 'audio/mpeg' }).data).toEqual(frame);
  });
});

describe('splitChunks', () => {
  it('cuts on whole frames and keeps every byte', () => {
    const data = Buffer.from(Array.from({ length: 23 }, (_, i) => i));
    const chunks = splitChunks(data, 9, 4);
    expect(chunks.map((c) => c.length)).toEqual([8, 8, 7]);
    expect(Buffer.concat(chunks)).toEqual(data);
  });
});

describe('raw PCM is what its bytes and parameters say', () => {
  /** Samples 1, -2, 300 as signed 16-bit little-endian: what the stream carries. */
  const S16LE = Buffer.from([0x01, 0x00, 0xfe, 0xff, 0x2c, 0x01]);
  const swapped = (b: Buffer) => Buffer.from(b).swap16();
  const headers = (rate: number) => new Headers({ 'x-svc-sample-rate': String(rate), 'x-svc-channels': '1', 'x-svc-bit-depth': '16' });

  it.each([
    ['GStreamer caps', 'audio/x-raw, format=S16LE, rate=16000, channels=1, layout=interleaved', S16LE],
    ['GStreamer caps with typed values', 'audio/x-raw, format=(string)S16LE, rate=(int)16000, channels=(int)1', S16LE],
    ['GStreamer big-endian', 'audio/x-raw, format=S16BE, rate=16000, channels=1', swapped(S16LE)],
    ['RFC 2586 L16 (network byte order)', 'audio/L16;rate=16000;channels=1', swapped(S16LE)],
    ['L16 stated little-endian', 'audio/L16; rate=16000; endianness=little', S16LE],
    ['old GStreamer caps', 'audio/x-raw-int, width=16, depth=16, endianness=1234, signed=true, rate=16000, channels=1', S16LE],
    ['sox-style names', 'audio/raw; sample_rate=16000; encoding=signed-integer; bits=16', S16LE],
    ['audio/pcm with a rate', 'audio/pcm;rate=16000', S16LE],
  ])('%s: the right layout and samples', (_name, contentType, body) => {
    const a = new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK });
    const converted = a.convert({ data: body, contentType });
    expect(converted.pcm).toEqual({ sampleRate: 16_000, channels: 1, bitDepth: 16 });
    expect(converted.data).toEqual(S16LE);
    expect(converted.warning).toBeUndefined();
  });

  it('other sample formats become 16-bit: float, 8-bit unsigned, 24-bit', () => {
    const f32 = Buffer.alloc(8);
    f32.writeFloatLE(0.5, 0);
    f32.writeFloatLE(-1, 4);
    expect(new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK }).convert({ data: f32, contentType: 'audio/x-raw, format=F32LE, rate=24000, channels=1' }).data).toEqual(Buffer.from([0x00, 0x40, 0x01, 0x80]));
    expect(new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK }).convert({ data: Buffer.from([0x80, 0xff]), contentType: 'audio/x-raw, format=U8, rate=24000' }).data).toEqual(Buffer.from([0x00, 0x00, 0x00, 0x7f]));
    expect(new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK }).convert({ data: Buffer.from([0x00, 0x34, 0x12]), contentType: 'audio/L24;rate=24000' }).data).toEqual(Buffer.from([0x34, 0x00]));
  });

  it('a label the client does not know on raw bytes: taken as the PCM asked for, with the layout its headers state, and a warning', () => {
    const a = new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK });
    const converted = a.convert({ data: S16LE, contentType: 'audio/x-vendor-samples', headers: headers(22_050) });
    expect(converted).toMatchObject({ data: S16LE, pcm: { sampleRate: 22_050, channels: 1, bitDepth: 16 }, warning: expect.stringContaining('audio/x-vendor-samples') });
  });

  it('a WAV file under a label the client does not know is read by its RIFF start (wav and pcm streams)', () => {
    for (const format of ['pcm', 'wav'] as const) {
      const a = new SegmentAudioAssembler(format, { fallbackPcm: FALLBACK, wavHeader: false });
      const converted = a.convert({ data: wavFile(S16LE), contentType: 'audio/x-riff-thing' });
      expect(converted).toMatchObject({ data: S16LE, pcm: PCM, warning: expect.stringContaining('WAV') });
    }
  });

  it('an mp3 or Ogg body under an unknown label is sniffed; asked as pcm it is refused (not the bytes asked for)', () => {
    const id3 = Buffer.concat([Buffer.from('ID3'), Buffer.from([3, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xfb, 0x90, 0x64])]);
    expect(new SegmentAudioAssembler('mp3', { fallbackPcm: FALLBACK }).convert({ data: id3, contentType: 'audio/x-mystery' }).warning).toContain('mp3');
    expect(() => new SegmentAudioAssembler('pcm', { fallbackPcm: FALLBACK }).convert({ data: id3, contentType: 'audio/x-mystery' })).toThrow(expect.objectContaining({ code: 'unexpected_audio_format' }));
    const ogg = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead'), Buffer.from([1, 1])]);
    expect(new SegmentAudioAssembler('opus', { fallbackPcm: FALLBACK }).convert({ data: ogg, contentType: 'application/x-mystery' }).warning).toContain('Ogg');
  });
});
