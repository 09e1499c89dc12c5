/**
 * Ogg Opus for the `opus` wire format: libopus (`opusscript`, WebAssembly, an
 * optional dependency) in 20 ms frames, muxed by our Ogg page writer. One
 * logical stream per request: OpusHead and OpusTags pages first, audio pages
 * as packets come, every `endSegment()` on a page boundary, an EOS page whose
 * granule position trims the final padding (RFC 7845).
 */
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import type { PcmInfo } from '../../protocol/audio.js';
import { OggPageWriter, type OggPacket } from './ogg.js';
import { Int16Reader } from './pcm.js';
import { Resampler } from './resample.js';

/** The slice of opusscript's API used here (its fields included: see `encodeFrame`). */
interface OpusScriptEncoder {
  encode(pcm: Buffer, frameSize: number): Buffer;
  encoderCTL(ctl: number, arg: number): void;
  delete(): void;
  /** The embind handler: `_encode(inputBytePointer, inputBytes, outputPointer, frameSize)` returns the packet length. */
  handler: { _encode(input: number, inputBytes: number, output: number, frameSize: number): number };
  inPCMPointer: number;
  /** Bytes allocated at `inPCMPointer`. */
  inPCMLength: number;
  /** A view at `outOpusPointer` (its buffer is the memory, unless detached by a growth). */
  outOpus: Uint8Array;
  outOpusPointer: number;
}

interface OpusScriptClass {
  new (sampleRate: number, channels: number, application: number): OpusScriptEncoder;
  Application: { VOIP: number; AUDIO: number };
}

const OPUS_RATES = [8_000, 12_000, 16_000, 24_000, 48_000] as const;
const GRANULE_RATE = 48_000; // Ogg Opus granule positions always count 48 kHz samples
const FRAME_MS = 20;
const GRANULE_PER_FRAME = (GRANULE_RATE * FRAME_MS) / 1000;
/** libopus lookahead (2.5 ms + 4 ms delay compensation) at 48 kHz, for the VOIP and AUDIO applications. */
const PRE_SKIP = 312;
const OPUS_SET_BITRATE = 4002;
const VENDOR = 'voxpipe';

let opusScript: OpusScriptClass | undefined | null = null; // null: not tried yet

/** opusscript's class, or undefined when the optional package is missing or does not load. */
export function loadOpusScript(): OpusScriptClass | undefined {
  if (opusScript === null) {
    try {
      opusScript = createRequire(import.meta.url)('opusscript') as OpusScriptClass;
    } catch {
      opusScript = undefined;
    }
  }
  return opusScript;
}


/**
 * opusscript's own `encode` is not used: it copies the PCM through a
 * `HEAPU16.subarray(pointer, ...)` view that indexes 16-bit elements with a
 * byte pointer (the view starts at twice the allocation's address), so once
 * its buffers sit past half of the WebAssembly memory (many concurrent
 * encoders) the view is cut short and encoding throws "offset is out of
 * bounds" (seen about 1 in 30 long opus requests), and below that it writes
 * outside its allocation. Here the same layout goes to the allocated input
 * buffer itself and the handler is called directly. Views on the memory are detached whenever the memory grows, so
 * the current buffer is looked up again when the one held is detached.
 */
let memory: ArrayBufferLike | undefined;

/** The WebAssembly memory's current buffer (a fresh instance's view, made and freed here, when the held one is detached). */
function currentMemory(OpusScript: OpusScriptClass, hint: OpusScriptEncoder): ArrayBufferLike {
  if (memory === undefined || memory.byteLength === 0) {
    memory = hint.outOpus.buffer;
    if (memory.byteLength === 0) {
      const probe = new OpusScript(GRANULE_RATE, 1, OpusScript.Application.VOIP);
      memory = probe.outOpus.buffer;
      probe.delete();
    }
  }
  return memory;
}

/** Encode one frame of s16le PCM; returns a copy of the Opus packet. */
function encodeFrame(OpusScript: OpusScriptClass, encoder: OpusScriptEncoder, pcm: Buffer, frameSize: number): Buffer {
  // The handler takes the PCM bytes one per 16-bit element (as opusscript's
  // own encode lays them out), so the input takes twice its byte length.
  if (pcm.length * 2 > encoder.inPCMLength) throw new RangeError(`opus frame of ${pcm.length} bytes exceeds the input buffer`);
  new Uint16Array(currentMemory(OpusScript, encoder), encoder.inPCMPointer, pcm.length).set(pcm);
  const length = encoder.handler._encode(encoder.inPCMPointer, pcm.length, encoder.outOpusPointer, frameSize);
  if (length < 0) throw new Error(`opus encode error ${length}`);
  // The memory may have grown during the call.
  return Buffer.from(new Uint8Array(currentMemory(OpusScript, encoder), encoder.outOpusPointer, length));
}

/** The Opus input rate used for a PCM rate: the smallest Opus rate not below it. */
export function opusRateFor(sampleRate: number): number {
  return OPUS_RATES.find((rate) => rate >= sampleRate) ?? GRANULE_RATE;
}

/** Options of `OggOpusEncoder`. */
export interface OpusEncoderOptions {
  /** Target bitrate in bit/s; default 32_000 (clear speech, mono). */
  bitrate?: number;
}

/** Encodes s16le PCM to one Ogg Opus logical stream. */
export class OggOpusEncoder {
  readonly #info: PcmInfo;
  readonly #encoder: OpusScriptEncoder;
  readonly #opusScript: OpusScriptClass;
  readonly #resampler: Resampler | undefined;
  readonly #reader = new Int16Reader();
  readonly #ogg = new OggPageWriter(randomInt(0, 2 ** 31));
  readonly #frameSamples: number; // per channel, at the Opus rate
  readonly #granulePerSample: number;
  #pending: Int16Array; // interleaved samples of the next, incomplete frame
  #pendingLength = 0;
  #frames = 0;
  /** Interleaved samples given to the encoder that count as audio (input and segment padding). */
  #timelineSamples = 0;
  #headersWritten = false;
  #ended = false;

  /** Throws when opusscript is not available or the PCM layout is unsupported. */
  constructor(info: PcmInfo, options: OpusEncoderOptions = {}) {
    const OpusScript = loadOpusScript();
    if (OpusScript === undefined) throw new Error('opus needs the optional package opusscript');
    if (info.bitDepth !== 16 || (info.channels !== 1 && info.channels !== 2)) {
      throw new RangeError(`opus needs 16-bit mono or stereo PCM, got ${info.bitDepth}-bit ${info.channels} channels`);
    }
    const rate = opusRateFor(info.sampleRate);
    if (rate !== info.sampleRate && info.channels !== 1) throw new RangeError(`opus: stereo at ${info.sampleRate} Hz would need resampling`);
    this.#info = info;
    this.#resampler = rate === info.sampleRate ? undefined : new Resampler(info.sampleRate, rate);
    this.#frameSamples = (rate * FRAME_MS) / 1000;
    this.#granulePerSample = GRANULE_RATE / rate;
    this.#pending = new Int16Array(this.#frameSamples * info.channels);
    this.#opusScript = OpusScript;
    this.#encoder = new OpusScript(rate, info.channels, OpusScript.Application.VOIP);
    this.#encoder.encoderCTL(OPUS_SET_BITRATE, options.bitrate ?? 32_000); // bit/s
  }

  write(pcm: Uint8Array): Buffer {
    this.#assertOpen();
    let samples = this.#reader.read(pcm);
    if (this.#resampler) samples = this.#resampler.push(samples);
    this.#timelineSamples += samples.length;
    return this.#output(this.#encodeFrames(samples), false);
  }

  /** Pads the last partial frame with silence and closes the page. */
  endSegment(): Buffer {
    this.#assertOpen();
    const tail = this.#resampler?.flush() ?? new Int16Array(0);
    this.#timelineSamples += tail.length;
    const packets = this.#encodeFrames(tail);
    const padding = this.#padFrame();
    this.#timelineSamples += padding;
    if (padding > 0) packets.push(this.#encodeFrame());
    return this.#output(packets, false);
  }

  /** Ends the stream: the last page has EOS and a granule position that trims the padding. */
  end(): Buffer {
    this.#assertOpen();
    const tail = this.#resampler?.flush() ?? new Int16Array(0);
    this.#timelineSamples += tail.length;
    const packets = this.#encodeFrames(tail);
    if (this.#padFrame() > 0) packets.push(this.#encodeFrame());
    const channels = this.#info.channels;
    const finalGranule = BigInt(PRE_SKIP + Math.round((this.#timelineSamples / channels) * this.#granulePerSample));
    // The decoder drops PRE_SKIP samples at the start: encode silence until the audio is all out.
    while (BigInt(this.#frames * GRANULE_PER_FRAME) < finalGranule) packets.push(this.#encodeFrame());
    const last = packets[packets.length - 1];
    if (last !== undefined) last.granuleEnd = finalGranule;
    this.#ended = true;
    const out = this.#output(packets, true);
    this.#encoder.delete();
    return out;
  }

  #assertOpen(): void {
    if (this.#ended) throw new Error('opus encoder already ended');
  }

  #encodeFrames(samples: Int16Array): OggPacket[] {
    const packets: OggPacket[] = [];
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(samples.length - offset, this.#pending.length - this.#pendingLength);
      this.#pending.set(samples.subarray(offset, offset + take), this.#pendingLength);
      this.#pendingLength += take;
      offset += take;
      if (this.#pendingLength === this.#pending.length) packets.push(this.#encodeFrame());
    }
    return packets;
  }

  /** Fills the partial frame with silence; returns the samples added (0 when no frame is open). */
  #padFrame(): number {
    if (this.#pendingLength === 0) return 0;
    const added = this.#pending.length - this.#pendingLength;
    this.#pending.fill(0, this.#pendingLength);
    this.#pendingLength = this.#pending.length;
    return added;
  }

  /** Encodes the pending frame (silence if empty) as one packet. */
  #encodeFrame(): OggPacket {
    if (this.#pendingLength < this.#pending.length) this.#pending.fill(0, this.#pendingLength);
    const bytes = Buffer.from(this.#pending.buffer, this.#pending.byteOffset, this.#pending.byteLength);
    const data = Buffer.from(encodeFrame(this.#opusScript, this.#encoder, bytes, this.#frameSamples)); // copy: opusscript reuses its buffer
    this.#pendingLength = 0;
    this.#frames++;
    return { data, granuleEnd: BigInt(this.#frames * GRANULE_PER_FRAME) };
  }

  #output(packets: OggPacket[], endOfStream: boolean): Buffer {
    const parts: Buffer[] = [];
    if (!this.#headersWritten) {
      this.#headersWritten = true;
      // OpusHead alone on the BOS page, OpusTags on the next: RFC 7845 section 3.
      parts.push(this.#ogg.pages([{ data: this.#opusHead(), granuleEnd: 0n }]));
      parts.push(this.#ogg.pages([{ data: opusTags(), granuleEnd: 0n }]));
    }
    if (packets.length > 0 || endOfStream) parts.push(this.#ogg.pages(packets, endOfStream));
    return Buffer.concat(parts);
  }

  #opusHead(): Buffer {
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'ascii');
    head[8] = 1; // version
    head[9] = this.#info.channels;
    head.writeUInt16LE(PRE_SKIP, 10);
    head.writeUInt32LE(this.#info.sampleRate, 12); // original rate, informational
    head.writeInt16LE(0, 16); // output gain
    head[18] = 0; // channel mapping family 0: mono or stereo
    return head;
  }
}

function opusTags(): Buffer {
  const vendor = Buffer.from(VENDOR, 'utf8');
  const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
  tags.write('OpusTags', 0, 'ascii');
  tags.writeUInt32LE(vendor.length, 8);
  vendor.copy(tags, 12);
  tags.writeUInt32LE(0, 12 + vendor.length); // no user comments
  return tags;
}
