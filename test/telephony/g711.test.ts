/**
 * G.711 (src/telephony/g711.ts) against references it does not share code
 * with: the decision-level tables of test/helpers/g711-reference.ts for
 * every 16-bit value, and CPython's audioop (the Sun reference coder in C)
 * where python3 still has it (removed in Python 3.13: skipped, with the
 * reason, elsewhere).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { decodeG711, encodeG711, g711Silence } from '../../src/telephony/g711.js';
import { referenceEncode, referenceMulawDecode } from '../helpers/g711-reference.js';

const ALL = Int16Array.from({ length: 65_536 }, (_, i) => i - 32_768);

function audioop(script: string): Buffer | string {
  const r = spawnSync('python3', ['-W', 'ignore', '-c', `import sys, audioop\n${script}`], { maxBuffer: 1 << 24 });
  if (r.error) return `python3 not found (${r.error.message})`;
  if (r.status !== 0) return `python3 has no audioop: ${r.stderr.toString().trim().split('\n').pop()}`;
  return r.stdout;
}

const probe = audioop('sys.stdout.buffer.write(b"ok")');
const audioopMissing = typeof probe === 'string' ? probe : undefined;

describe('G.711', () => {
  for (const law of ['mulaw', 'alaw'] as const) {
    it(`${law}: every 16-bit sample encodes as the decision-level reference says`, () => {
      expect(Buffer.from(encodeG711(ALL, law)).equals(referenceEncode(ALL, law))).toBe(true);
    });

    it(`${law}: every code decodes to a level that encodes back to the same code (zero excepted)`, () => {
      const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
      const again = encodeG711(decodeG711(codes, law), law);
      const zero = decodeG711(Uint8Array.of(g711Silence(law)), law)[0];
      for (let c = 0; c < 256; c++) {
        // Negative zero decodes to 0, which encodes as positive zero.
        if (decodeG711(Uint8Array.of(c), law)[0] === zero) continue;
        expect(again[c], `code ${c}`).toBe(c);
      }
    });

    it.skipIf(audioopMissing !== undefined)(`${law}: byte-exact to CPython audioop over every 16-bit sample${audioopMissing ? ` (skipped: ${audioopMissing})` : ''}`, () => {
      const fn = law === 'mulaw' ? 'lin2ulaw' : 'lin2alaw';
      const out = audioop(`import struct\nsys.stdout.buffer.write(audioop.${fn}(struct.pack('<65536h', *range(-32768, 32768)), 2))`);
      expect(Buffer.isBuffer(out)).toBe(true);
      expect(Buffer.from(encodeG711(ALL, law)).equals(out as Buffer)).toBe(true);
      const dec = audioop(`sys.stdout.buffer.write(audioop.${law === 'mulaw' ? 'ulaw2lin' : 'alaw2lin'}(bytes(range(256)), 2))`) as Buffer;
      const mine = decodeG711(Uint8Array.from({ length: 256 }, (_, i) => i), law);
      expect(Array.from(mine)).toEqual(Array.from({ length: 256 }, (_, i) => dec.readInt16LE(i * 2)));
    });
  }

  it('mulaw decodes to the reference reconstruction levels', () => {
    const mine = decodeG711(Uint8Array.from({ length: 256 }, (_, i) => i), 'mulaw');
    expect(Array.from(mine)).toEqual(Array.from({ length: 256 }, (_, c) => referenceMulawDecode(c) || 0));
  });
});
