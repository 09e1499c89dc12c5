// Word timings estimated from a segment's text and audio,
// against the truth of the reference engine: eSpeak NG's own word events
// (EspeakEngine.synthesizeWithWords, a bench and test hook never on the wire).
// For every word after the first of each sentence of WORD_TIMING_TEXTS, the
// error |estimated start - true start| in ms, for the estimate and for the
// character-proportional baseline, at two voices and two speeds.
// Then the two cases a barge-in meets:
// - mid-arrival: each sentence's audio arrived only up to a point (30, 50,
//   70 % of it), its words placed from what arrived
//   (estimateArrivingWordTimings, at the rate of the sentence before, as a
//   stream has it) and the listener barging in at the arrival edge and
//   250 ms behind it: the error of the heard boundary (|true time of the
//   word boundary the heard text ends at - true time of the one it should
//   end at|, 0 when the same word) against today's proportional cut, the
//   share of cuts at the right word, and the boundary error of the placed
//   words;
// - mp3: the audio through the reference server's mp3 encoder and the
//   client's decoder (DecodedEnergies), words placed from the decoded
//   energies, errors after the codec's constant delay (found by aligning
//   the energies).
// Cost: the time to meter the audio as it arrives (per MB of PCM; alone, in
// 4 KiB chunks 2-byte aligned and not, as a frame's audio field may be) and
// to place the words at a barge-in.
// Writes bench/out/word-timing.json. Run `npm run build` first.
//
//   node bench/word-timing.mjs
import { EspeakEngine, espeakAvailable } from '../dist/server/engines/espeak.js';
import { WORD_TIMING_TEXTS } from '../dist/bench/texts.js';
import { estimateArrivingWordTimings, estimateWordTimings, FrameEnergies, heardAtWord, msPerWeight, pcmSamples, proportionalWordTimings, wordBoundaryErrors } from '../dist/stream/word-timing.js';
import { cutAtWord } from '../dist/stream/heard.js';
import { DecodedEnergies } from '../dist/stream/decoded-energies.js';
import { Mp3SegmentEncoder } from '../dist/server/audio/mp3.js';
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

const FRACTIONS = [0.3, 0.5, 0.7];
const LAGS_MS = [0, 250];

/** Where the text's words truly start (eSpeak's events), by the character each estimated word starts at: the boundary after char `c` is the true start of the first true word at or after it. */
const trueBoundaryMs = (truth, chars, endMs) => truth.find((t) => t.charStart >= chars)?.startMs ?? endMs;

/** The heard cut the truth gives at `playedMs`: the chars up to the last word whose true end (the next word's true start) had played. */
function trueCut(text, truth, playedMs, endMs) {
  let chars = 0;
  for (let i = 0; i < truth.length; i++) {
    const end = truth[i + 1]?.startMs ?? endMs;
    if (end > playedMs) break;
    chars = text.slice(0, truth[i + 1]?.charStart ?? text.length).trimEnd().length;
  }
  return chars;
}

/** Encodes PCM with the reference server's mp3 encoder and decodes it with the client's, to energies. */
async function throughMp3(pcm, sampleRate) {
  const encoder = new Mp3SegmentEncoder({ sampleRate, channels: 1, bitDepth: 16 });
  const mp3 = Buffer.concat([encoder.write(pcm), encoder.endSegment()]);
  const t0 = performance.now();
  const decoded = new DecodedEnergies('mp3', { sampleRate, channels: 1 });
  for (let i = 0; i < mp3.length; i += 4096) decoded.push(mp3.subarray(i, i + 4096));
  await decoded.end();
  cost.mp3Ms += performance.now() - t0;
  cost.mp3AudioMs += (pcm.length / 2 / sampleRate) * 1000;
  const energies = decoded.energies;
  decoded.close();
  return { energies, bytes: mp3.length };
}

/** The codec's delay: the shift (in frames) that best aligns the decoded energies with the source's. */
function delayFrames(source, decoded) {
  let best = 0;
  let bestScore = -Infinity;
  for (let shift = 0; shift <= 15; shift++) {
    let score = 0;
    for (let f = 0; f < source.length && f + shift < decoded.length; f++) score -= Math.abs(source[f] - decoded[f + shift]);
    if (score > bestScore) {
      bestScore = score;
      best = shift;
    }
  }
  return best;
}

const engine = new EspeakEngine({ warmUpRounds: 0 });
const cases = [];
const all = { estimate: [], baseline: [] };
const arriving = { heard: [], heardBaseline: [], exact: 0, exactBaseline: 0, cuts: 0, placed: [] };
const mp3 = { estimate: [], pcmEstimate: [] };
/** The PCM of the first case, metered again for the cost per MB. */
const corpus = [];
const cost = { meterMs: 0, meterBytes: 0, arrivingMs: 0, arrivingCalls: 0, completeMs: 0, completeBytes: 0, mp3Ms: 0, mp3AudioMs: 0 };
try {
  for (const { name, voice } of VOICES) {
    for (const speed of SPEEDS) {
      const estimate = [];
      const baseline = [];
      let rate;
      let bytesPerChar;
      for (const text of WORD_TIMING_TEXTS) {
        const { pcm, words } = await engine.synthesizeWithWords(text, { voice, speed });
        const samples = pcmSamples(pcm);
        const durationMs = (samples.length / engine.sampleRate) * 1000;
        const tc = performance.now();
        const full = estimateWordTimings(text, { samples, sampleRate: engine.sampleRate });
        cost.completeMs += performance.now() - tc;
        cost.completeBytes += pcm.length;
        estimate.push(...wordBoundaryErrors(full, words));
        baseline.push(...wordBoundaryErrors(proportionalWordTimings(text, durationMs), words));

        if (name === VOICES[0].name && speed === 1) corpus.push({ pcm });

        // Mid-arrival: the audio up to `f`, metered as it streams (4 KiB chunks).
        for (const f of FRACTIONS) {
          const arrivedBytes = Math.floor((pcm.length * f) / 2) * 2;
          const t0 = performance.now();
          const meter = new FrameEnergies(engine.sampleRate, 1);
          for (let i = 0; i < arrivedBytes; i += 4096) meter.push(pcm.subarray(i, Math.min(arrivedBytes, i + 4096)));
          const t1 = performance.now();
          const placed = estimateArrivingWordTimings(text, meter, rate);
          cost.meterMs += t1 - t0;
          cost.meterBytes += arrivedBytes;
          cost.arrivingMs += performance.now() - t1;
          cost.arrivingCalls++;
          arriving.placed.push(...wordBoundaryErrors(placed, words));
          const arrivedMs = (arrivedBytes / 2 / engine.sampleRate) * 1000;
          for (const lag of LAGS_MS) {
            const played = arrivedMs - lag;
            if (played <= 0) continue;
            const right = trueCut(text, words, played, durationMs);
            const cut = heardAtWord(placed, played, text.length, false).chars;
            // Today's fallback: in proportion to the audio, its length guessed from the bytes per character of the segments before.
            const guessBytes = bytesPerChar ? text.length * bytesPerChar : 0;
            const cutBaseline = cutAtWord(text, (played / arrivedMs) * (arrivedBytes / Math.max(arrivedBytes, guessBytes)));
            const at = (chars) => trueBoundaryMs(words, chars, durationMs);
            arriving.heard.push(Math.abs(at(cut) - at(right)));
            arriving.heardBaseline.push(Math.abs(at(cutBaseline) - at(right)));
            arriving.exact += cut === right ? 1 : 0;
            arriving.exactBaseline += cutBaseline === right ? 1 : 0;
            arriving.cuts++;
          }
        }
        rate = msPerWeight(text, full) ?? rate;
        bytesPerChar = pcm.length / text.length;

        if (speed === 1) {
          const { energies } = await throughMp3(pcm, engine.sampleRate);
          const source = new FrameEnergies(engine.sampleRate, 1);
          source.push(pcm);
          const shiftMs = delayFrames(source.db, energies.db) * energies.frameMs;
          const shifted = estimateWordTimings(text, energies).map((w) => ({ ...w, startMs: w.startMs - shiftMs, endMs: w.endMs - shiftMs }));
          mp3.estimate.push(...wordBoundaryErrors(shifted, words));
          mp3.pcmEstimate.push(...wordBoundaryErrors(full, words));
          mp3.delayMs = shiftMs;
        }
      }
      all.estimate.push(...estimate);
      all.baseline.push(...baseline);
      cases.push({ voice: name, speed, estimate: summary(estimate), baseline: summary(baseline) });
    }
  }
} finally {
  await engine.close();
}

// Metering alone, per MB: the first case's PCM in 4 KiB chunks, 2-byte
// aligned and not (a copy at an odd offset, as a frame's audio field may
// be), in alternating rounds; the median round. Metered as 24 kHz (every
// 3rd sample read, as of the tone engine's audio) rather than eSpeak's
// 22,050 Hz (every 11th): the costlier case a client-bound stream meets.
const METER_ROUNDS = 15;
const oddCorpus = corpus.map(({ pcm }) => {
  const odd = new Uint8Array(pcm.length + 1).subarray(1);
  odd.set(pcm);
  return { pcm: odd };
});
const meterRounds = { aligned: [], unaligned: [] };
const corpusBytes = corpus.reduce((s, { pcm }) => s + pcm.length, 0);
for (let round = 0; round < METER_ROUNDS; round++) {
  for (const [kind, texts] of round % 2 ? [['unaligned', oddCorpus], ['aligned', corpus]] : [['aligned', corpus], ['unaligned', oddCorpus]]) {
    const t0 = performance.now();
    for (const { pcm } of texts) {
      const meter = new FrameEnergies(24_000, 1);
      for (let i = 0; i < pcm.length; i += 4096) meter.push(pcm.subarray(i, i + 4096));
    }
    meterRounds[kind].push(((performance.now() - t0) / corpusBytes) * 1e6);
  }
}

const results = {
  bench: 'word-timing',
  engine: 'espeak',
  machine: machine(),
  sentences: WORD_TIMING_TEXTS.length,
  cases,
  overall: { estimate: summary(all.estimate), baseline: summary(all.baseline) },
  midArrival: {
    fractions: FRACTIONS,
    lagsMs: LAGS_MS,
    cuts: arriving.cuts,
    heardBoundary: summary(arriving.heard),
    heardBoundaryProportional: summary(arriving.heardBaseline),
    exactWordShare: r(arriving.exact / arriving.cuts, 3),
    exactWordShareProportional: r(arriving.exactBaseline / arriving.cuts, 3),
    placedWords: summary(arriving.placed),
  },
  mp3: { kbps: 48, codecDelayMs: r(mp3.delayMs, 1), estimate: summary(mp3.estimate), samePcm: summary(mp3.pcmEstimate) },
  cost: {
    meterMsPerMB: r((cost.meterMs / cost.meterBytes) * 1e6, 2),
    meterAlignedMsPerMBMedian: r(quantile(meterRounds.aligned, 0.5), 3),
    meterUnalignedMsPerMBMedian: r(quantile(meterRounds.unaligned, 0.5), 3),
    meterRounds: METER_ROUNDS,
    meterCorpusBytes: corpusBytes,
    completeEstimateMsPerMB: r((cost.completeMs / cost.completeBytes) * 1e6, 2),
    arrivingEstimateMsPerCall: r(cost.arrivingMs / cost.arrivingCalls, 3),
    mp3DecodeMsPerAudioSecond: r((cost.mp3Ms / cost.mp3AudioMs) * 1000, 2),
  },
};
const file = writeResults('word-timing', results);
console.log(`word-boundary error vs eSpeak's word events (${WORD_TIMING_TEXTS.length} sentences per case)`);
console.log('voice                       speed  words   estimate p50/p90 ms   proportional p50/p90 ms');
for (const c of [...cases, { voice: 'all', speed: '', ...results.overall }]) {
  console.log(
    `${c.voice.padEnd(27)} ${String(c.speed).padStart(5)}  ${String(c.estimate.words).padStart(5)}   ${String(c.estimate.medianMs).padStart(8)} / ${String(c.estimate.p90Ms).padEnd(8)}   ${String(c.baseline.medianMs).padStart(8)} / ${c.baseline.p90Ms}`,
  );
}
const m = results.midArrival;
console.log(`mid-arrival (${m.cuts} cuts at ${FRACTIONS.join('/')} of the audio, lag ${LAGS_MS.join('/')} ms): heard boundary p50/p90 ${m.heardBoundary.medianMs} / ${m.heardBoundary.p90Ms} ms, right word ${(m.exactWordShare * 100).toFixed(1)} %; proportional ${m.heardBoundaryProportional.medianMs} / ${m.heardBoundaryProportional.p90Ms} ms, right word ${(m.exactWordShareProportional * 100).toFixed(1)} %; placed words p50/p90 ${m.placedWords.medianMs} / ${m.placedWords.p90Ms} ms (${m.placedWords.words})`);
console.log(`mp3 (${results.mp3.kbps} kbit/s, codec delay ${results.mp3.codecDelayMs} ms, speed 1): p50/p90 ${results.mp3.estimate.medianMs} / ${results.mp3.estimate.p90Ms} ms (same audio as pcm: ${results.mp3.samePcm.medianMs} / ${results.mp3.samePcm.p90Ms})`);
console.log(`cost: metering ${results.cost.meterMsPerMB} ms per MB of PCM as it arrives (alone, as 24 kHz, median of ${METER_ROUNDS} rounds: ${results.cost.meterAlignedMsPerMBMedian} in 4 KiB chunks, ${results.cost.meterUnalignedMsPerMBMedian} in chunks not 2-byte aligned), estimating at completion ${results.cost.completeEstimateMsPerMB} ms per MB (from the whole PCM here; a stream estimates from its energies); placing the words at a barge-in ${results.cost.arrivingEstimateMsPerCall} ms; decoding mp3 to energies ${results.cost.mp3DecodeMsPerAudioSecond} ms per second of audio`);
console.log(`wrote ${file}`);
