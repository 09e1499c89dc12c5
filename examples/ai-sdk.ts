/**
 * Vercel AI SDK (ai@7): an LLM's text stream into live speech with
 * `experimental_streamSpeech` and the voxpipe provider. Runs with no
 * configuration (the embedded reference server and a mock language model):
 *
 *   npx tsx examples/ai-sdk.ts
 *
 * With a real model, replace `mockModel()` by e.g. `openai('gpt-4.1-mini')`,
 * and point voxpipe at a deployment with VOXPIPE_BASE_URL and VOXPIPE_API_KEY.
 */
import { writeFile } from 'node:fs/promises';
import { experimental_streamSpeech as streamSpeech, streamText } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { openService, sinks } from 'voxpipe';
import { createVoxpipe } from 'voxpipe/ai-sdk';

const ANSWER = 'Sure. The first sentence is spoken while the model still writes the rest. Nothing is dropped or repeated.';

function mockModel(): MockLanguageModelV4 {
  const deltas = ANSWER.match(/.{1,4}/g) ?? [];
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: simulateReadableStream({
        chunkDelayInMs: 25, // about 40 tokens per second
        chunks: [
          { type: 'text-start', id: '0' },
          ...deltas.map((delta) => ({ type: 'text-delta' as const, id: '0', delta })),
          { type: 'text-end', id: '0' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: deltas.length, text: deltas.length, reasoning: 0 } } },
        ],
      }),
    }),
  });
}

const service = await openService({ onNote: (n) => console.error(`note: ${n}`) });
const voxpipe = createVoxpipe({ config: service.config, spare: 1 }); // one connection prewarmed for the turn
try {
  await voxpipe.prewarm();
  const started = performance.now();
  const llm = streamText({ model: mockModel(), prompt: 'Say something.' });
  const speech = streamSpeech({ model: voxpipe.speech(), text: llm.textStream });
  const audio: Buffer[] = [];
  let rate = 0;
  for await (const part of speech.fullStream) {
    if (part.type === 'error') throw part.error;
    if (part.type !== 'audio') continue;
    if (audio.length === 0) console.log(`first audio after ${(performance.now() - started).toFixed(0)} ms (${part.audioFormat.type}, ${part.audioFormat.rate} Hz)`);
    rate = part.audioFormat.rate ?? rate;
    audio.push(Buffer.from(part.audio)); // or write each part to a player as it arrives
  }
  const pcm = Buffer.concat(audio);
  await writeFile('ai-sdk.wav', Buffer.concat([sinks.buildWavHeader({ sampleRate: rate, channels: 1, bitDepth: 16 }, pcm.length), pcm]));
  console.log(`wrote ai-sdk.wav: ${pcm.length} bytes of PCM, ${(await speech.usage).inputCharacters} characters spoken`);
} finally {
  voxpipe.close();
  await service.close();
}
