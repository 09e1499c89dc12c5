// Word timings estimated from a segment's text and audio,
// against the truth of the reference engine: eSpeak NG's own word events
// (EspeakEngine.synthesizeWithWords, a bench and test hook never on the wire).
// For every word after the first of each sentence of WORD_TIMING_TEXTS, the
// error |estimated start - true start| in ms, for the estimate and for the
// character-proportional baseline, at two voices and two speeds.
// Writes bench/out/word-timing.json. Run `npm run build` first.
//
//   node bench/word-timing.mjs
import { EspeakEngine, espeakAvailable } from '../dist/server/engines/espeak.js';
import { WORD_TIMING_TEXTS } from '../dist/bench/texts.js';
import { estimateWordTimings, pcmSamples, proportionalWordTimings, wordBoundaryErrors } from '../dist/stream/word-timing.js';
import { machine, r, writeResults } from './_common.mjs';

if (!(await espeakAvailable())) {
  console.log('word-timing: @echogarden/espeak-ng-emscripten is not installed; nothing to measure');
  process.exit(0);
}

const VOICES = [
  { name: 'en-us (male, 120 Hz)', voice: { basePitchHz: 120, rate: 1, espeakVoice: 'en-us' } },
  { name: 'en-us+f3 (female, 210 Hz)', voice: { basePitchHz: 210, rate: 1, espeakVoice: 'en-us+f3' } },
];
const SPEEDS = [1, 1.5];

const quantile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const summary = (errors) => ({ words: errors.length, medianMs: r(quantile(errors, 0.5), 1), p90Ms: r(quantile(errors, 0.9), 1), meanMs: r(errors.reduce((s, e) => s + e, 0) / errors.length, 1) });

const engine = new EspeakEngine({ warmUpRounds: 0 });
const cases = [];
const all = { estimate: [], baseline: [] };
try {
  for (const { name, voice } of VOICES) {
    for (const speed of SPEEDS) {
      const estimate = [];
      const baseline = [];
      for (const text of WORD_TIMING_TEXTS) {
        const { pcm, words } = await engine.synthesizeWithWords(text, { voice, speed });
        const samples = pcmSamples(pcm);
        const durationMs = (samples.length / engine.sampleRate) * 1000;
        estimate.push(...wordBoundaryErrors(estimateWordTimings(text, { samples, sampleRate: engine.sampleRate }), words));
        baseline.push(...wordBoundaryErrors(proportionalWordTimings(text, durationMs), words));
      }
      all.estimate.push(...estimate);
      all.baseline.push(...baseline);
      cases.push({ voice: name, speed, estimate: summary(estimate), baseline: summary(baseline) });
    }
  }
} finally {
  await engine.close();
}

const results = {
  bench: 'word-timing',
  engine: 'espeak',
  machine: machine(),
  sentences: WORD_TIMING_TEXTS.length,
  cases,
  overall: { estimate: summary(all.estimate), baseline: summary(all.baseline) },
};
const file = writeResults('word-timing', results);
console.log(`word-boundary error vs eSpeak's word events (${WORD_TIMING_TEXTS.length} sentences per case)`);
console.log('voice                       speed  words   estimate p50/p90 ms   proportional p50/p90 ms');
for (const c of [...cases, { voice: 'all', speed: '', ...results.overall }]) {
  console.log(
    `${c.voice.padEnd(27)} ${String(c.speed).padStart(5)}  ${String(c.estimate.words).padStart(5)}   ${String(c.estimate.medianMs).padStart(8)} / ${String(c.estimate.p90Ms).padEnd(8)}   ${String(c.baseline.medianMs).padStart(8)} / ${c.baseline.p90Ms}`,
  );
}
console.log(`wrote ${file}`);
