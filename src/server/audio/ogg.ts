/**
 * A minimal Ogg page writer (RFC 3533) for one logical stream: packets in,
 * pages out. Each call to `pages()` ends on a page boundary, which is what a
 * segment boundary of the opus wire format needs.
 */

const CRC_POLYNOMIAL = 0x04c1_1db7; // Ogg's CRC-32: not reflected, initial 0, no final xor
const CRC_TABLE = buildCrcTable();

function buildCrcTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x8000_0000 ? (r << 1) ^ CRC_POLYNOMIAL : r << 1;
    table[i] = r >>> 0;
  }
  return table;
}

/** Ogg's CRC-32 of `data` (the page with its checksum field zeroed). */
export function oggCrc32(data: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < data.length; i++) crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ (data[i] ?? 0)) & 0xff] ?? 0)) >>> 0;
  return crc;
}

/** Header type flags of a page. */
export const OggFlag = {
  continued: 0x01,
  beginOfStream: 0x02,
  endOfStream: 0x04,
} as const;

/** A packet and the granule position at its end (for Opus: 48 kHz samples since the start, pre-skip included). */
export interface OggPacket {
  data: Uint8Array;
  granuleEnd: bigint;
}

const MAX_SEGMENTS = 255;
const MAX_LACING = 255;
const HEADER_BYTES = 27;
/** Granule of a page on which no packet ends. */
const NO_GRANULE = -1n;

/** Writes the pages of one logical Ogg stream. */
export class OggPageWriter {
  readonly #serial: number;
  #sequence = 0;
  #started = false;

  /** `serial`: the stream's serial number (any 32-bit value, random by convention). */
  constructor(serial: number) {
    this.#serial = serial >>> 0;
  }

  /** Pages written so far. */
  get pageCount(): number {
    return this.#sequence;
  }

  /**
   * Packs `packets` into as few pages as lacing allows (at most 255 segments a
   * page). The first page of the stream gets the BOS flag; with `endOfStream`
   * the last page gets EOS. An empty `packets` list with `endOfStream` writes
   * an empty EOS page with `eosGranule`.
   */
  pages(packets: readonly OggPacket[], endOfStream = false, eosGranule = NO_GRANULE): Buffer {
    const out: Buffer[] = [];
    let lacing: number[] = [];
    let bodies: Uint8Array[] = [];
    let granule = NO_GRANULE;
    let continued = false;
    const flush = (last: boolean): void => {
      let flags = continued ? OggFlag.continued : 0;
      if (!this.#started) flags |= OggFlag.beginOfStream;
      if (last && endOfStream) flags |= OggFlag.endOfStream;
      out.push(this.#page(flags, granule, lacing, bodies));
      lacing = [];
      bodies = [];
      granule = NO_GRANULE;
      continued = false;
    };
    for (const packet of packets) {
      let offset = 0;
      // A packet of n bytes takes floor(n / 255) + 1 lacing values.
      for (;;) {
        const remaining = packet.data.length - offset;
        const take = Math.min(remaining, (MAX_SEGMENTS - lacing.length) * MAX_LACING);
        const full = Math.floor(take / MAX_LACING);
        const ends = take === remaining && lacing.length + full < MAX_SEGMENTS;
        for (let i = 0; i < full; i++) lacing.push(MAX_LACING);
        bodies.push(packet.data.subarray(offset, offset + (ends ? remaining : full * MAX_LACING)));
        if (ends) {
          lacing.push(remaining - full * MAX_LACING);
          granule = packet.granuleEnd;
          break;
        }
        offset += full * MAX_LACING;
        flush(false);
        continued = true; // the next page continues this packet
      }
      if (lacing.length === MAX_SEGMENTS) flush(false);
    }
    if (lacing.length > 0 || (endOfStream && out.length === 0)) {
      if (lacing.length === 0) granule = eosGranule;
      flush(true);
    } else if (endOfStream && out.length > 0) {
      // The last page is already built: set EOS on it and re-checksum.
      const last = out[out.length - 1] as Buffer;
      last[5] = (last[5] ?? 0) | OggFlag.endOfStream;
      last.writeUInt32LE(0, 22);
      last.writeUInt32LE(oggCrc32(last), 22);
    }
    return Buffer.concat(out);
  }

  #page(flags: number, granule: bigint, lacing: number[], bodies: Uint8Array[]): Buffer {
    const bodyBytes = bodies.reduce((sum, body) => sum + body.length, 0);
    const page = Buffer.alloc(HEADER_BYTES + lacing.length + bodyBytes);
    page.write('OggS', 0, 'ascii');
    page[4] = 0; // version
    page[5] = flags;
    page.writeBigInt64LE(granule, 6);
    page.writeUInt32LE(this.#serial, 14);
    page.writeUInt32LE(this.#sequence++, 18);
    // CRC at 22, computed below over the page with this field zero
    page[26] = lacing.length;
    for (let i = 0; i < lacing.length; i++) page[HEADER_BYTES + i] = lacing[i] ?? 0;
    let offset = HEADER_BYTES + lacing.length;
    for (const body of bodies) {
      page.set(body, offset);
      offset += body.length;
    }
    page.writeUInt32LE(oggCrc32(page), 22);
    this.#started = true;
    return page;
  }
}
