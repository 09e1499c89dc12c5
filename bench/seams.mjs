// Seams between segments on the reference engine (espeak-ng):
// for every join, the silence on each side and the sample jump, before and
// after the playback seam policy (pause capped at 250 ms, clicks faded over
// 5 ms). Writes bench/out/seams.json and bench/out/seams.svg (each
// seam's waveform, before above and after below; seams-ENGINE.* for another engine). Run `npm run build` first.
//
//   node bench/seams.mjs [--engine espeak|tone]
import { writeFileSync } from 'node:fs';
import { createSpeechStream } from '../dist/speech.js';
import { BENCH_TEXTS } from '../dist/bench/texts.js';
import { measureSeams, smoothSeams } from '../dist/sinks/seams.js';
import { machine, r, resultPath, startChildServer, writeResults } from './_common.mjs';

const engineArg = process.argv.indexOf('--engine');
const engine = engineArg >= 0 ? process.argv[engineArg + 1] : 'espeak';
const TEXTS = ['medium', 'long'];

/** Speak a text; its PCM and where each segment after the first starts. */
async function speak(config, text) {
  const speech = await createSpeechStream(config, { format: 'pcm' });
  speech.end(text);
  const parts = [];
  const boundaries = [];
  let samples = 0;
  let last;
  let rate = 0;
  for await (const chunk of speech.chunks()) {
    rate = chunk.sampleRate;
    if (last !== undefined && chunk.segmentId !== last) boundaries.push(samples);
    last = chunk.segmentId;
    parts.push(chunk.data);
    samples += chunk.data.length / 2;
  }
  const buf = Buffer.concat(parts);
  const pcm = new Int16Array(buf.length / 2);
  for (let i = 0; i < pcm.length; i++) pcm[i] = buf.readInt16LE(i * 2);
  return { pcm, boundaries, rate };
}

function stats(seams) {
  const pick = (k) => seams.map((s) => s[k]).sort((a, b) => a - b);
  const q = (xs, p) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] : null);
  const row = (k) => ({ min: r(q(pick(k), 0), 1), p50: r(q(pick(k), 0.5), 1), max: r(pick(k).at(-1) ?? null, 1) });
  return { count: seams.length, silenceBeforeMs: row('silenceBeforeMs'), silenceAfterMs: row('silenceAfterMs'), gapMs: row('gapMs'), jump: row('jump'), clicks: seams.filter((s) => s.click).length };
}

/** One panel per seam: min/max envelope of +-WINDOW ms around the join, before (top) and after (bottom). */
function plot(cases) {
  const WINDOW_MS = 700;
  const W = 360;
  const H = 70;
  const panels = cases.flatMap((c) => c.before.seams.map((s, i) => ({ c, i, s })));
  const cols = 3;
  const rows = Math.ceil(panels.length / cols);
  const PW = W + 20;
  const PH = 2 * H + 40;
  const svg = [`<svg xmlns="http://www.w3.org/2000/svg" width="${cols * PW + 20}" height="${rows * PH + 60}" font-family="sans-serif" font-size="11">`];
  svg.push(`<rect width="100%" height="100%" fill="white"/><text x="10" y="18" font-size="14">Seams on the ${engine} engine: before (grey) and after the playback seam policy (blue), +-${WINDOW_MS} ms around each join (red)</text>`);
  const wave = (pcm, at, rate, x0, y0, color) => {
    const span = Math.round((WINDOW_MS * rate) / 1000);
    const pts = [];
    for (let px = 0; px < W; px++) {
      const a = at - span + Math.floor((px * 2 * span) / W);
      const b = at - span + Math.floor(((px + 1) * 2 * span) / W);
      let lo = 0;
      let hi = 0;
      for (let k = Math.max(0, a); k < Math.min(pcm.length, b); k++) {
        lo = Math.min(lo, pcm[k]);
        hi = Math.max(hi, pcm[k]);
      }
      pts.push(`M${x0 + px},${(y0 + H / 2 - (hi / 32768) * (H / 2)).toFixed(1)}V${(y0 + H / 2 - (lo / 32768) * (H / 2)).toFixed(1)}`);
    }
    return `<path d="${pts.join('')}" stroke="${color}" stroke-width="1"/><line x1="${x0 + W / 2}" x2="${x0 + W / 2}" y1="${y0}" y2="${y0 + H}" stroke="red" stroke-dasharray="2,2"/>`;
  };
  panels.forEach(({ c, i, s }, n) => {
    const x0 = 10 + (n % cols) * PW;
    const y0 = 40 + Math.floor(n / cols) * PH;
    const after = c.after.seams[i];
    svg.push(`<text x="${x0}" y="${y0 + 10}">${c.text} seam ${i + 1}: gap ${s.gapMs.toFixed(0)} -> ${after.gapMs.toFixed(0)} ms, jump ${s.jump} -> ${after.jump}</text>`);
    svg.push(wave(c.pcmBefore, Math.round((s.atMs * c.rate) / 1000), c.rate, x0, y0 + 15, '#888'));
    svg.push(wave(c.pcmAfter, Math.round((after.atMs * c.rate) / 1000), c.rate, x0, y0 + 20 + H, '#1f5fbf'));
  });
  svg.push('</svg>');
  return svg.join('\n');
}

const server = await startChildServer({ engine });
try {
  const cases = [];
  for (const name of TEXTS) {
    const { pcm, boundaries, rate } = await speak(server.config, BENCH_TEXTS[name]);
    const before = measureSeams(pcm, boundaries, rate);
    const smoothed = smoothSeams(pcm, boundaries, rate);
    const after = measureSeams(smoothed.pcm, smoothed.boundaries, rate);
    cases.push({ text: name, rate, segments: boundaries.length + 1, audioMs: r((pcm.length / rate) * 1000, 1), playedMs: r((smoothed.pcm.length / rate) * 1000, 1), trimmedMs: r(smoothed.trimmedMs, 1), fades: smoothed.fades, before: { ...stats(before), seams: before }, after: { ...stats(after), seams: after }, pcmBefore: pcm, pcmAfter: smoothed.pcm });
  }
  const round = (s) => ({ ...s, atMs: r(s.atMs, 1), silenceBeforeMs: r(s.silenceBeforeMs, 1), silenceAfterMs: r(s.silenceAfterMs, 1), gapMs: r(s.gapMs, 1) });
  const results = {
    bench: 'seams',
    engine,
    machine: machine(),
    policy: { maxPauseMs: 250, fadeMs: 5, silenceThreshold: 328, clickThreshold: 656 },
    cases: cases.map(({ pcmBefore: _b, pcmAfter: _a, before, after, ...c }) => ({ ...c, before: { ...before, seams: before.seams.map(round) }, after: { ...after, seams: after.seams.map(round) } })),
  };
  const name = engine === 'espeak' ? 'seams' : `seams-${engine}`;
  const file = writeResults(name, results);
  const svgFile = resultPath(`${name}.svg`);
  writeFileSync(svgFile, plot(cases));
  console.log(`engine ${engine}; policy: pause <= 250 ms, 5 ms fades on a jump > 656`);
  console.log('text    segs  seams  gap ms p50/max (before -> after)   jump p50/max (before -> after)   clicks   audio ms -> played');
  for (const c of results.cases) {
    const b = c.before;
    const a = c.after;
    console.log(
      `${c.text.padEnd(7)} ${String(c.segments).padStart(4)} ${String(b.count).padStart(6)}  ${b.gapMs.p50}/${b.gapMs.max} -> ${a.gapMs.p50}/${a.gapMs.max}`.padEnd(62) +
        `  ${b.jump.p50}/${b.jump.max} -> ${a.jump.p50}/${a.jump.max}`.padEnd(33) +
        `${b.clicks} -> ${a.clicks}   ${c.audioMs} -> ${c.playedMs}`,
    );
  }
  console.log(`wrote ${file} and ${svgFile}`);
} finally {
  await server.close();
}
