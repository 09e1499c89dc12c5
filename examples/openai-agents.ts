/**
 * An `@openai/agents` run's text stream (`result.toTextStream()`) into live
 * speech: the agent's answer is spoken while it is still being written.
 *
 *   OPENAI_API_KEY=... npx tsx examples/openai-agents.ts "Tell me about foxes."
 *
 * Uses the chat-completions API so any compatible endpoint works
 * (OPENAI_BASE_URL). Writes openai-agents.wav.
 */
import { pipeline } from 'node:stream/promises';
import { Agent, run, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import { createSpeechStream, openService, sinks } from 'voxpipe';

if (!process.env['OPENAI_API_KEY']) {
  console.error('set OPENAI_API_KEY (and OPENAI_BASE_URL for an endpoint other than OpenAI)');
  process.exit(2);
}
setOpenAIAPI('chat_completions');
setTracingDisabled(true);

const agent = new Agent({
  name: 'Narrator',
  instructions: 'Answer in two or three short spoken sentences.',
  model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini',
});
const result = await run(agent, process.argv[2] ?? 'Say hello.', { stream: true });

const service = await openService();
try {
  const speech = await createSpeechStream(service.config, { format: 'pcm' });
  const info = await speech.open();
  speech.on('first-audio', ({ ttfaMs }) => console.log(`first audio ${ttfaMs.toFixed(0)} ms after the first token`));
  // toTextStream() is a Node Readable of the answer's text deltas.
  await pipeline(result.toTextStream(), speech, sinks.openFileSink('openai-agents.wav', info));
  await result.completed;
  console.log(`wrote openai-agents.wav: ${speech.summary().segments.length} segments, ${speech.summary().bytes} bytes of speech`);
} finally {
  await service.close();
}
