/**
 * The energy of a compressed segment's audio (mp3, opus), decoded as it
 * arrives, for its word timings: the speech core's `EnergySource` in Node.
 * It reuses the streaming decoders of codecs/ (`createDecoder`, mpg123 and
 * libopus in WebAssembly), loaded on the first compressed segment, so a
 * pcm or wav stream never loads them. Node only: the browser's core gets no
 * energy source and cuts compressed audio in proportion to it (its bundle
 * carries no decoder).
 */
import type { Decoder } from '../codecs/base.js';
import type * as DecoderEntry from '../codecs/decoder.js';
import type { EnergySource } from './speech-core.js';
import { FrameEnergies } from './word-timing.js';

/** Opus is decoded at this rate for its energies: a rate libopus decodes to directly, and enough for energy (not spectrum). */
const OPUS_ENERGY_RATE = 16_000; // Hz

type DecoderModule = typeof DecoderEntry;
let loading: Promise<DecoderModule> | undefined;

/** A compressed segment's audio decoded to frame energies as it arrives. */
export class DecodedEnergies implements EnergySource {
  #energies: FrameEnergies | undefined;
  #decoder: Decoder | undefined;
  /** Bytes pushed before the decoder loaded. */
  #queue: Uint8Array[] | undefined = [];
  /** Encoded bytes the decoder has taken, and PCM bytes it gave. */
  #consumed = 0;
  #pcmBytes = 0;
  #ended: Promise<void> | undefined;
  #closed = false;

  constructor(format: string, layout: { sampleRate: number; channels: number }) {
    loading ??= import('../codecs/decoder.js');
    void loading.then(
      ({ createDecoder }) => {
        if (this.#closed) return;
        const decoder = createDecoder({ format: format as 'mp3' | 'opus', sampleRate: layout.sampleRate, channels: layout.channels, bitDepth: 16 }, { opusSampleRate: OPUS_ENERGY_RATE });
        this.#decoder = decoder;
        decoder.on('data', (pcm: Buffer) => {
          const info = decoder.pcmInfo;
          this.#energies ??= new FrameEnergies(info.sampleRate, info.channels);
          this.#energies.push(pcm);
          this.#pcmBytes += pcm.length;
        });
        // A segment that does not decode keeps the energies it had: its words are placed from them, or cut in proportion.
        decoder.on('error', () => undefined);
        const queued = this.#queue ?? [];
        this.#queue = undefined;
        for (const data of queued) this.#write(data);
      },
      () => (this.#queue = undefined),
    );
  }

  push(data: Uint8Array): void {
    if (this.#closed || data.length === 0) return;
    if (this.#queue) this.#queue.push(data);
    else this.#write(data);
  }

  #write(data: Uint8Array): void {
    const decoder = this.#decoder;
    if (!decoder || decoder.destroyed || decoder.writableEnded) return;
    decoder.write(data, (err) => {
      if (!err) this.#consumed += data.length;
    });
  }

  get energies(): FrameEnergies | undefined {
    return this.#energies;
  }

  get msPerByte(): number | undefined {
    const info = this.#decoder?.pcmInfo;
    if (!info || this.#pcmBytes === 0 || this.#consumed === 0) return undefined;
    return (this.#pcmBytes / (2 * info.channels * info.sampleRate) / this.#consumed) * 1000;
  }

  end(): Promise<void> {
    this.#ended ??= (async () => {
      const decoded = await loading?.then(
        () => true,
        () => false,
      );
      const decoder = this.#decoder;
      if (!decoded || !decoder || decoder.destroyed) return;
      await new Promise<void>((resolve) => {
        decoder.once('end', resolve);
        decoder.once('close', resolve);
        decoder.end();
      });
    })();
    return this.#ended;
  }

  close(): void {
    this.#closed = true;
    this.#queue = undefined;
    this.#decoder?.destroy();
  }
}

/** The core's energy source for compressed formats in Node (`SpeechCoreOptions.decodedEnergies`). */
export function decodedEnergies(format: string, layout: { sampleRate: number; channels: number }): EnergySource | undefined {
  return format === 'mp3' || format === 'opus' ? new DecodedEnergies(format, layout) : undefined;
}
