import { describe, expect, it } from 'vitest';
import { OggFlag, OggPageWriter, oggCrc32 } from '../../../src/server/audio/ogg.js';
import { oggPages } from './helpers.js';

describe('oggCrc32', () => {
  it('is CRC-32 with polynomial 0x04c11db7, no reflection, initial 0, no final xor', () => {
    expect(oggCrc32(Buffer.from('123456789'))).toBe(0x89a1_897f);
    expect(oggCrc32(Buffer.alloc(0))).toBe(0);
  });
});

describe('OggPageWriter', () => {
  it('puts BOS on the first page, numbers pages and sets granules', () => {
    const writer = new OggPageWriter(1234);
    const first = oggPages(writer.pages([{ data: Buffer.from('head'), granuleEnd: 0n }]));
    const second = oggPages(writer.pages([{ data: Buffer.alloc(10), granuleEnd: 960n }, { data: Buffer.alloc(20), granuleEnd: 1920n }]));
    expect(first).toHaveLength(1);
    expect(first[0]?.flags).toBe(OggFlag.beginOfStream);
    expect(first[0]?.serial).toBe(1234);
    expect(second[0]?.flags).toBe(0);
    expect(second[0]?.sequence).toBe(1);
    expect(second[0]?.granule).toBe(1920n);
    expect(second[0]?.lacing).toEqual([10, 20]);
  });

  it('ends a packet that is a multiple of 255 bytes with a zero lacing value', () => {
    const [page] = oggPages(new OggPageWriter(1).pages([{ data: Buffer.alloc(510), granuleEnd: 1n }]));
    expect(page?.lacing).toEqual([255, 255, 0]);
  });

  it('continues a packet too big for one page on the next, with granule -1 where none ends', () => {
    const big = Buffer.alloc(255 * 300, 7);
    const pages = oggPages(new OggPageWriter(1).pages([{ data: big, granuleEnd: 5n }, { data: Buffer.alloc(3), granuleEnd: 6n }], true));
    expect(pages).toHaveLength(2);
    expect(pages[0]?.granule).toBe(-1n);
    expect(pages[0]?.lacing).toHaveLength(255);
    expect(pages[1]?.flags).toBe(OggFlag.continued | OggFlag.endOfStream);
    expect(pages[1]?.granule).toBe(6n);
    expect(Buffer.concat(pages.map((p) => p.body)).length).toBe(big.length + 3);
  });

  it('starts a new page after 255 segments', () => {
    const packets = Array.from({ length: 300 }, (_, i) => ({ data: Buffer.alloc(1), granuleEnd: BigInt(i + 1) }));
    const pages = oggPages(new OggPageWriter(1).pages(packets));
    expect(pages.map((p) => p.lacing.length)).toEqual([255, 45]);
    expect(pages.map((p) => p.granule)).toEqual([255n, 300n]);
    expect(pages[1]?.flags).toBe(0);
  });

  it('writes an empty EOS page when asked to end with no packets', () => {
    const writer = new OggPageWriter(1);
    writer.pages([{ data: Buffer.from('x'), granuleEnd: 0n }]);
    const [page] = oggPages(writer.pages([], true, 960n));
    expect(page?.flags).toBe(OggFlag.endOfStream);
    expect(page?.granule).toBe(960n);
    expect(page?.lacing).toEqual([]);
  });
});
