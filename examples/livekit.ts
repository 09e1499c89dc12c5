/**
 * LiveKit Agents: voxpipe as the agent's TTS. In an agent it is one line:
 *
 *   const session = new voice.AgentSession({ stt, llm, tts: await voxpipe.TTS.create({ config }) });
 *
 * This example drives the plugin the way AgentSession does (text pushed as
 * the LLM writes it, a flush at the end of the turn), with no LiveKit room
 * and nothing configured (the embedded reference server), and writes the
 * frames to a WAV:
 *
 *   npx tsx examples/livekit.ts
 */
import { writeFile } from 'node:fs/promises';
import { initializeLogger, tts as lk } from '@livekit/agents';
import { dispose } from '@livekit/rtc-node';
import { openService, sinks } from 'voxpipe';
import * as voxpipe from 'voxpipe/livekit';

initializeLogger({ pretty: false, level: 'warn' }); // the agents CLI does this in a real worker

const service = await openService({ onNote: (n) => console.error(`note: ${n}`) });
const tts = await voxpipe.TTS.create({ config: service.config });
try {
  await tts.prewarm(); // the first turn starts on an authenticated connection
  tts.on('metrics_collected', (m) => console.log(`metrics: ttfb ${m.ttfbMs} ms for ${m.charactersCount} characters`));
  const stream = tts.stream();
  for (const token of 'Hi! I am your agent. Ask me anything, and I will answer out loud.'.match(/.{1,3}/g) ?? []) stream.pushText(token);
  stream.flush();
  stream.endInput();

  const samples: Int16Array[] = [];
  for await (const audio of stream) {
    if (audio === lk.SynthesizeStream.END_OF_STREAM) break;
    for (const t of audio.timedTranscripts ?? []) console.log(`at ${t.startTime?.toFixed(2)} s: ${JSON.stringify(t.text)}`);
    samples.push(audio.frame.data); // in an agent: the AudioSource of the room
  }
  const pcm = Buffer.concat(samples.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength)));
  await writeFile('livekit.wav', Buffer.concat([sinks.buildWavHeader({ sampleRate: tts.sampleRate, channels: 1, bitDepth: 16 }, pcm.length), pcm]));
  console.log(`wrote livekit.wav: ${samples.length} frames, ${pcm.length} bytes at ${tts.sampleRate} Hz`);
} finally {
  await tts.close();
  await service.close();
  await dispose();
}
