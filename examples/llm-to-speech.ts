/**
 * Pipe a token stream at LLM pace into live speech and print the time to
 * first audio. Runs with no configuration (the embedded reference server):
 *
 *   npx tsx examples/llm-to-speech.ts
 *
 * Point it at a deployment with VOXPIPE_BASE_URL and VOXPIPE_API_KEY.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createSpeechStream, openService, sinks } from 'voxpipe';

const ANSWER =
  'Sure! Here is a short answer. Streaming speech starts talking as soon as the first clause is ready, ' +
  'so the listener hears the reply while the model is still writing it. Later sentences follow at natural boundaries, ' +
  'and nothing is dropped or repeated, even if the connection fails and resumes.';

/** Sub-word tokens at about 40 tokens per second, like a chat model. */
async function* fakeLlm(text: string, tokensPerSecond = 40): AsyncGenerator<string> {
  let i = 0;
  while (i < text.length) {
    const size = 2 + Math.floor(Math.random() * 4);
    yield text.slice(i, i + size);
    i += size;
    await new Promise((r) => setTimeout(r, 1000 / tokensPerSecond));
  }
}

const service = await openService({ onNote: (n) => console.error(`note: ${n}`) });
try {
  const speech = await createSpeechStream(service.config, { format: 'pcm' });
  const info = await speech.open();
  const audio = { format: info.format, sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth };
  // No sound card: play into a real-time clock instead, so the timing is still real.
  const { sink, playing } = await sinks.openPlaybackOrClock(audio);
  if (!playing) console.error('note: no audio device here; playing into a clock-paced null sink');
  speech.on('first-audio', ({ ttfaMs }) => console.log(`time to first audio: ${ttfaMs.toFixed(1)} ms after the first token`));
  speech.on('segment', (s) => {
    const w = s.waterfall;
    console.log(`segment ${s.segmentId} (${w.characters} chars via ${s.transport}): sent +${(w.sentMs! - w.textReceivedMs).toFixed(1)} ms, first audio +${(w.firstAudioMs! - w.sentMs!).toFixed(1)} ms after sending`);
  });
  await pipeline(Readable.from(fakeLlm(ANSWER)), speech, sink);
  const summary = speech.summary();
  console.log(`done: ${summary.segments.length} segments, ${summary.bytes} bytes of ${info.format} at ${info.sampleRate} Hz, ${summary.units} units`);
} finally {
  await service.close();
}
