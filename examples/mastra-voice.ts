/**
 * A Mastra voice provider on voxpipe whose `speak()` takes the text as a
 * stream and returns the audio at once: the agent's answer is spoken while
 * it is still being written (Mastra's stock providers collect the whole text
 * first).
 *
 *   npx tsx examples/mastra-voice.ts
 *
 * Use it as any Mastra voice: `new Agent({ ..., voice: new VoxpipeVoice(config) })`,
 * then `agent.voice.speak(textStream)`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { MastraVoice } from '@mastra/core/voice';
import { createSpeechStream, listVoices, openService, sinks, type ServiceConfig, type SpeechOptions } from 'voxpipe';

export class VoxpipeVoice extends MastraVoice {
  readonly #config: ServiceConfig;
  readonly #options: SpeechOptions;

  constructor(config: ServiceConfig, options: SpeechOptions = {}) {
    super({ name: 'voxpipe', ...(options.voiceId !== undefined && { speaker: options.voiceId }) });
    this.#config = config;
    this.#options = options;
  }

  /** Resolves as soon as the stream is open: audio flows while `input` is still being written. */
  async speak(input: string | NodeJS.ReadableStream, options: { speaker?: string } & SpeechOptions = {}): Promise<NodeJS.ReadableStream> {
    const { speaker, ...rest } = options;
    const voiceId = speaker ?? this.speaker;
    const speech = await createSpeechStream(this.#config, { format: 'pcm', ...this.#options, ...rest, ...(voiceId !== undefined && { voiceId }) });
    await speech.open();
    if (typeof input === 'string') speech.end(input);
    else pipeline(input, speech).catch((err: unknown) => speech.destroy(err as Error));
    return speech;
  }

  async listen(): Promise<string> {
    throw new Error('VoxpipeVoice speaks; use voxpipe.createClient(...).asr for speech to text');
  }

  override async getSpeakers(): Promise<Array<{ voiceId: string }>> {
    return (await listVoices(this.#config)).map((v) => ({ voiceId: v.voiceId }));
  }
}

/** An LLM's answer, a few characters at a time. */
async function* answer(): AsyncGenerator<string> {
  const text = 'Mastra hands voxpipe the text as it is written. The first sentence plays before the last is done.';
  for (let i = 0; i < text.length; i += 4) {
    yield text.slice(i, i + 4);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const service = await openService();
try {
  const voice = new VoxpipeVoice(service.config);
  console.log(`speakers: ${(await voice.getSpeakers()).length}`);
  const started = performance.now();
  let textDone: number | undefined;
  const text = Readable.from(answer()).on('end', () => (textDone = performance.now()));
  const audio = await voice.speak(text);
  console.log(`audio stream returned after ${(performance.now() - started).toFixed(0)} ms, text still streaming: ${textDone === undefined}`);
  const info = (audio as Awaited<ReturnType<typeof createSpeechStream>>).info!;
  await pipeline(audio, sinks.openFileSink('mastra.wav', info));
  console.log(`wrote mastra.wav (${info.sampleRate} Hz)`);
} finally {
  await service.close();
}
