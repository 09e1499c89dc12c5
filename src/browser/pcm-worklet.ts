/**
 * The AudioWorklet side of `PcmPlayer` (bundled to `pcm-worklet.js`): 16-bit
 * PCM chunks in through the port, played back to back from a queue (no gap
 * between chunks), silence and one counted underrun when the queue runs dry
 * before the end, the play position reported every ~100 ms. With capture on,
 * it keeps every byte it received, so a test can compare what reached the
 * audio thread with what the Node client gets for the same text.
 */

// The worklet global scope (not in TypeScript's DOM library).
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}
declare function registerProcessor(name: string, processor: new (options: { processorOptions?: unknown }) => AudioWorkletProcessor): void;

interface Options {
  channels: number;
  capture: boolean;
}

type InMessage = { type: 'pcm'; data: ArrayBuffer } | { type: 'end' } | { type: 'clear' } | { type: 'dump' };

class PcmPlayerProcessor extends AudioWorkletProcessor {
  readonly #channels: number;
  readonly #capture: Uint8Array[] | undefined;
  readonly #queue: Float32Array[] = [];
  #offset = 0;
  #queuedFrames = 0;
  #playedFrames = 0;
  #underruns = 0;
  #started = false;
  #starved = false;
  #ended = false;
  #drainedSent = false;
  #sinceReport = 0;

  constructor(options: { processorOptions?: unknown }) {
    super();
    const o = (options.processorOptions ?? {}) as Partial<Options>;
    this.#channels = Math.max(1, o.channels ?? 1);
    this.#capture = o.capture ? [] : undefined;
    this.port.onmessage = (event: MessageEvent<InMessage>) => this.#onMessage(event.data);
  }

  #onMessage(message: InMessage): void {
    switch (message.type) {
      case 'pcm': {
        this.#capture?.push(new Uint8Array(message.data.slice(0)));
        const samples = new Int16Array(message.data);
        const floats = new Float32Array(samples.length);
        for (let i = 0; i < samples.length; i++) floats[i] = samples[i]! / 32768;
        this.#queue.push(floats);
        this.#queuedFrames += samples.length / this.#channels;
        this.#started = true;
        this.#drainedSent = false;
        return;
      }
      case 'end':
        this.#ended = true;
        return;
      case 'clear':
        this.#queue.length = 0;
        this.#offset = 0;
        this.#queuedFrames = 0;
        this.#ended = true;
        this.#report();
        return;
      case 'dump': {
        const parts = this.#capture ?? [];
        const total = parts.reduce((n, p) => n + p.byteLength, 0);
        const all = new Uint8Array(total);
        let at = 0;
        for (const p of parts) {
          all.set(p, at);
          at += p.byteLength;
        }
        this.port.postMessage({ type: 'dump', data: all.buffer }, [all.buffer]);
        return;
      }
    }
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0] ?? [];
    const frames = out[0]?.length ?? 128;
    for (let i = 0; i < frames; i++) {
      const chunk = this.#queue[0];
      if (!chunk) {
        for (const channel of out) channel[i] = 0;
        if (this.#started && !this.#ended && !this.#starved) {
          this.#starved = true;
          this.#underruns += 1;
        }
        continue;
      }
      this.#starved = false;
      for (let c = 0; c < out.length; c++) out[c]![i] = chunk[this.#offset + Math.min(c, this.#channels - 1)]!;
      this.#offset += this.#channels;
      this.#playedFrames += 1;
      this.#queuedFrames -= 1;
      if (this.#offset >= chunk.length) {
        this.#queue.shift();
        this.#offset = 0;
      }
    }
    this.#sinceReport += frames;
    if (this.#sinceReport >= 4096) this.#report();
    if (this.#ended && this.#queue.length === 0 && !this.#drainedSent) {
      this.#drainedSent = true;
      this.#report();
      this.port.postMessage({ type: 'drained' });
    }
    return true;
  }

  #report(): void {
    this.#sinceReport = 0;
    this.port.postMessage({ type: 'position', playedFrames: this.#playedFrames, queuedFrames: this.#queuedFrames, underruns: this.#underruns });
  }
}

registerProcessor('voxpipe-pcm-player', PcmPlayerProcessor);
