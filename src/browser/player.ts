/**
 * `PcmPlayer`: live 16-bit PCM playback in the page through an AudioWorklet
 * (`pcm-worklet.js`). The AudioContext runs at the stream's own sample rate,
 * so nothing is resampled; chunks play back to back; underruns are counted;
 * `playedMs` says how much the listener has heard, which is what an
 * interrupt should report.
 */
export interface PcmPlayerOptions {
  /** URL of the bundled `pcm-worklet.js`. */
  workletUrl: string | URL;
  /** Keep every byte the audio thread received (for tests: `captured()`). */
  capture?: boolean;
}

export interface PlayerPosition {
  playedFrames: number;
  queuedFrames: number;
  underruns: number;
}

export class PcmPlayer {
  readonly context: AudioContext;
  readonly sampleRate: number;
  readonly channels: number;
  readonly #node: AudioWorkletNode;
  #carry: Uint8Array | undefined;
  #position: PlayerPosition = { playedFrames: 0, queuedFrames: 0, underruns: 0 };
  #drained: Promise<void>;
  #onDrained: (() => void) | undefined;
  #dumpWaiter: ((data: Uint8Array) => void) | undefined;

  private constructor(context: AudioContext, node: AudioWorkletNode, channels: number) {
    this.context = context;
    this.channels = channels;
    this.sampleRate = context.sampleRate;
    this.#node = node;
    this.#drained = new Promise((resolve) => (this.#onDrained = resolve));
    node.port.onmessage = (event: MessageEvent) => {
      const m = event.data as { type: string } & Partial<PlayerPosition> & { data?: ArrayBuffer };
      if (m.type === 'position') this.#position = { playedFrames: m.playedFrames ?? 0, queuedFrames: m.queuedFrames ?? 0, underruns: m.underruns ?? 0 };
      else if (m.type === 'drained') this.#onDrained?.();
      else if (m.type === 'dump' && m.data) this.#dumpWaiter?.(new Uint8Array(m.data));
    };
  }

  static async create(info: { sampleRate: number; channels: number }, options: PcmPlayerOptions): Promise<PcmPlayer> {
    const context = new AudioContext({ sampleRate: info.sampleRate, latencyHint: 'interactive' });
    await context.audioWorklet.addModule(options.workletUrl);
    const node = new AudioWorkletNode(context, 'voxpipe-pcm-player', {
      numberOfInputs: 0,
      outputChannelCount: [info.channels],
      processorOptions: { channels: info.channels, capture: options.capture === true },
    });
    node.connect(context.destination);
    if (context.state === 'suspended') await context.resume().catch(() => undefined);
    return new PcmPlayer(context, node, info.channels);
  }

  /** Queue PCM bytes (any split; an odd byte waits for its pair). */
  push(bytes: Uint8Array): void {
    let data = bytes;
    if (this.#carry) {
      data = new Uint8Array(this.#carry.byteLength + bytes.byteLength);
      data.set(this.#carry);
      data.set(bytes, this.#carry.byteLength);
      this.#carry = undefined;
    }
    const whole = data.byteLength - (data.byteLength % 2);
    if (whole < data.byteLength) this.#carry = data.slice(whole);
    if (whole === 0) return;
    const copy = data.slice(0, whole).buffer;
    this.#node.port.postMessage({ type: 'pcm', data: copy }, [copy]);
  }

  /** No more audio: `drained` resolves once the queue has played out. */
  end(): void {
    this.#node.port.postMessage({ type: 'end' });
  }

  /** Stop at once (barge-in): queued audio is dropped. */
  clear(): void {
    this.#node.port.postMessage({ type: 'clear' });
  }

  get drained(): Promise<void> {
    return this.#drained;
  }

  /** What the listener has heard so far, in ms (reported by the audio thread every ~100 ms). */
  get playedMs(): number {
    return (this.#position.playedFrames / this.sampleRate) * 1000;
  }

  /** Bytes of PCM the listener has heard so far (what `BrowserSpeech.interrupt(heardBytes)` takes). */
  get playedBytes(): number {
    return this.#position.playedFrames * this.channels * 2;
  }

  get position(): Readonly<PlayerPosition> {
    return this.#position;
  }

  /** Every byte the audio thread received (with `capture: true`). */
  captured(): Promise<Uint8Array> {
    return new Promise((resolve) => {
      this.#dumpWaiter = resolve;
      this.#node.port.postMessage({ type: 'dump' });
    });
  }

  async close(): Promise<void> {
    this.#node.disconnect();
    await this.context.close().catch(() => undefined);
  }
}
