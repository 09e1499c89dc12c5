/**
 * The `openai` package's chat-completions stream piped into live speech.
 *
 *   OPENAI_API_KEY=... npx tsx examples/openai-chat.ts "What is a fox?"
 *
 * Any chat-completions endpoint works (OPENAI_BASE_URL); voxpipe runs on the
 * embedded reference server unless VOXPIPE_BASE_URL says otherwise. Writes
 * openai-chat.wav (play it live with `sinks.openPlaybackSink(info)` instead).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import OpenAI from 'openai';
import { createSpeechStream, openService, sinks } from 'voxpipe';

if (!process.env['OPENAI_API_KEY']) {
  console.error('set OPENAI_API_KEY (and OPENAI_BASE_URL for an endpoint other than OpenAI)');
  process.exit(2);
}
const question = process.argv[2] ?? 'Say hello in two sentences.';
const openai = new OpenAI();
const completion = await openai.chat.completions.create({
  model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini',
  messages: [{ role: 'user', content: question }],
  stream: true,
});

/** The text deltas of the completion, as they arrive. */
async function* deltas(): AsyncGenerator<string> {
  for await (const chunk of completion) {
    const text = chunk.choices[0]?.delta?.content;
    if (text) yield text;
  }
}

const service = await openService();
try {
  const speech = await createSpeechStream(service.config, { format: 'pcm' });
  const info = await speech.open();
  speech.on('first-audio', ({ ttfaMs }) => console.log(`first audio ${ttfaMs.toFixed(0)} ms after the first token`));
  await pipeline(Readable.from(deltas()), speech, sinks.openFileSink('openai-chat.wav', info));
  const summary = speech.summary();
  console.log(`wrote openai-chat.wav: ${summary.segments.length} segments, ${summary.bytes} bytes of speech`);
} finally {
  await service.close();
}
