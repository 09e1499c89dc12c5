/**
 * Barge-in: interrupt speech mid-utterance (the user started talking) and
 * print what was spoken. Runs with no configuration:
 *
 *   npx tsx examples/barge-in.ts
 */
import { createSpeechStream, openService, sinks } from 'voxpipe';

const LONG =
  'Let me walk you through the whole process step by step. First, open the settings page. ' +
  'Second, choose the account you want to change. Third, scroll down to the security section. ' +
  'Fourth, press the button that says reset. Fifth, confirm the change in the email we send you.';
const INTERRUPT_AFTER_MS = 2_500; // the user speaks up 2.5 s into playback

const service = await openService({ onNote: (n) => console.error(`note: ${n}`) });
try {
  const speech = await createSpeechStream(service.config, { format: 'pcm' });
  const info = await speech.open();
  const audio = { format: info.format, sampleRate: info.sampleRate, channels: info.channels, bitDepth: info.bitDepth };
  // No sound card: play into a real-time clock instead, so the timing is still real.
  const { sink, playing } = await sinks.openPlaybackOrClock(audio);
  if (!playing) console.error('note: no audio device here; playing into a clock-paced null sink');
  speech.pipe(sink);
  speech.end(LONG);
  await new Promise((r) => setTimeout(r, INTERRUPT_AFTER_MS));
  const report = await speech.interrupt();
  sink.end();
  console.log(`interrupted after ${INTERRUPT_AFTER_MS} ms`);
  for (const s of report.spoken) console.log(`${s.complete ? 'spoken  ' : 'cut off '} ${JSON.stringify(s.text.trim())}`);
  console.log(`spoken characters: ${report.spokenChars}; never spoken: ${JSON.stringify(report.unspokenText.trim().slice(0, 80))}...`);
} finally {
  await service.close();
}
