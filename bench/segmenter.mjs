// Segmenter throughput: a long LLM-like text pushed as ~4-character tokens
// through TokenSegmenter (timers off), plus the pure core on one chunk.
// Run `npm run build` first. Writes bench/out/segmenter.json.
import { writeFileSync } from 'node:fs';
import { CutMode, segmentText, splitForFrames } from '../dist/stream/segmenter.js';
import { TokenSegmenter } from '../dist/stream/token-segmenter.js';
import { resultPath } from './_common.mjs';

const PARAGRAPH = [
  'Sure! Here is a short overview of what Mr. Smith and Dr. Jones found, e.g. in the 2023 report. ',
  'The U.S. economy grew by 3.14 percent, i.e. faster than expected; prices rose to $4.50 per unit. ',
  'J. R. R. Tolkien once wrote: "Not all those who wander are lost." Then he kept writing… ',
  'Wait... what happened next? Nothing much! Really?! Yes!!!\n\n',
  'Version v1.2.3 is out now. Details are at https://example.com/a.b?c=d and questions go to a.b@example.com. ',
  'Emoji are fine 🎉 too 👍🏽, even families 👨‍👩‍👧 and flags 🇫🇷. ',
  'Steps:\n1. Open the box.\n2. Take it out.\n3. Enjoy!\n\n',
  '今天天气很好。我们去公园吧！你觉得呢？好的；走吧。「こんにちは。」と彼は言った。\n',
  'A long paragraph follows, with many clauses — some of them separated by dashes, others by commas, ',
  'and a few by semicolons; it keeps going for a while so that sentences are merged up to the target. ',
].join('');

const TARGET_BYTES = 2 * 1024 * 1024; // 2 MiB of UTF-8
const TOKEN_UNITS = 4; // ~4 characters per LLM token
const ROUNDS = 5;

const text = PARAGRAPH.repeat(Math.ceil(TARGET_BYTES / Buffer.byteLength(PARAGRAPH)));
const bytes = Buffer.byteLength(text);
const tokens = [];
for (let i = 0; i < text.length; i += TOKEN_UNITS) tokens.push(text.slice(i, i + TOKEN_UNITS));

function pushAll() {
  let segments = 0;
  let chars = 0;
  const seg = new TokenSegmenter({ firstSegmentTimeoutMs: Infinity, segmentTimeoutMs: Infinity }, (s) => {
    segments++;
    chars += s.length;
  });
  const t0 = process.hrtime.bigint();
  for (const token of tokens) seg.push(token);
  seg.end();
  const ns = Number(process.hrtime.bigint() - t0);
  if (chars !== text.length) throw new Error('segmenter lost or added text');
  return { ns, segments };
}

function oneChunk() {
  const t0 = process.hrtime.bigint();
  const r = segmentText(text, { emitted: 0 }, CutMode.final);
  const ns = Number(process.hrtime.bigint() - t0);
  return { ns, segments: r.segments.length };
}

function frames() {
  const segment = 'lorem ipsum dolor sit amet '.repeat(370); // ~10,000 characters
  const t0 = process.hrtime.bigint();
  let n = 0;
  for (let i = 0; i < 1000; i++) n += splitForFrames(segment).length;
  const ns = Number(process.hrtime.bigint() - t0);
  return { nsPerSegment: ns / 1000, framesPerSegment: n / 1000 };
}

pushAll(); // warm-up
oneChunk();
const runs = Array.from({ length: ROUNDS }, pushAll).sort((a, b) => a.ns - b.ns);
const chunkRuns = Array.from({ length: ROUNDS }, oneChunk).sort((a, b) => a.ns - b.ns);
const median = runs[Math.floor(ROUNDS / 2)];
const chunkMedian = chunkRuns[Math.floor(ROUNDS / 2)];
const frameResult = frames();

const result = {
  bench: 'segmenter',
  date: new Date().toISOString(),
  node: process.version,
  inputBytes: bytes,
  inputCodeUnits: text.length,
  tokens: tokens.length,
  tokenCodeUnits: TOKEN_UNITS,
  rounds: ROUNDS,
  tokenStream: {
    medianMs: +(median.ns / 1e6).toFixed(2),
    mbPerSec: +(bytes / 1e6 / (median.ns / 1e9)).toFixed(2),
    tokensPerSec: Math.round(tokens.length / (median.ns / 1e9)),
    nsPerToken: +(median.ns / tokens.length).toFixed(1),
    segments: median.segments,
    avgSegmentChars: Math.round(text.length / median.segments),
  },
  oneChunk: {
    medianMs: +(chunkMedian.ns / 1e6).toFixed(2),
    mbPerSec: +(bytes / 1e6 / (chunkMedian.ns / 1e9)).toFixed(2),
    segments: chunkMedian.segments,
  },
  splitForFrames10k: {
    usPerSegment: +(frameResult.nsPerSegment / 1e3).toFixed(2),
    framesPerSegment: frameResult.framesPerSegment,
  },
};

console.log(`segmenter: ${(bytes / 1e6).toFixed(2)} MB as ${tokens.length} tokens of ${TOKEN_UNITS} code units`);
console.log(
  `  TokenSegmenter: ${result.tokenStream.mbPerSec} MB/s, ${result.tokenStream.tokensPerSec} tokens/s, ` +
    `${result.tokenStream.nsPerToken} ns/token, ${result.tokenStream.segments} segments (avg ${result.tokenStream.avgSegmentChars} chars)`,
);
console.log(`  segmentText one chunk: ${result.oneChunk.mbPerSec} MB/s, ${result.oneChunk.segments} segments`);
console.log(`  splitForFrames 10,000 chars: ${result.splitForFrames10k.usPerSegment} us, ${result.splitForFrames10k.framesPerSegment} frames`);

const out = resultPath('segmenter.json');
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`  wrote ${out}`);
