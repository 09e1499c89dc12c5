import { performance } from 'node:perf_hooks';
import { FrameEnergies } from '../dist/stream/word-timing.js';
const big = Buffer.alloc(8 * 1024 * 1024 + 1);
for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
for (const skew of [0, 1]) {
  let best = Infinity;
  for (let r = 0; r < 15; r++) {
    const m = new FrameEnergies(24000, 1);
    const t = performance.now();
    for (let at = skew; at + 8192 <= big.length; at += 8192) m.push(big.subarray(at, at + 8192));
    best = Math.min(best, performance.now() - t);
  }
  console.log(`skew ${skew}: ${(best / 8).toFixed(3)} ms per MB`);
}
