/**
 * Writing a service's audio file where the user said (`jobs download`,
 * `design preview`): the file holds what its name says. When the extension
 * names another format than the bytes are, the audio is converted (wav and
 * raw PCM decoded here, mp3 and opus by the decoders, other containers
 * through ffmpeg), and the note says so.
 */
import { stat, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AUDIO_FORMATS } from '../protocol/audio.js';
import { parseWavHeader } from '../sinks/wav-header.js';
import { note, type Io } from './io.js';

type Format = (typeof AUDIO_FORMATS)[number];

/** The format a file name asks for (`.wav` → wav, ...), when --format is not given. */
export function formatOfPath(path: string | undefined): Format | undefined {
  const ext = path?.toLowerCase().match(/\.(\w+)$/)?.[1];
  if (ext === 'wav' || ext === 'mp3' || ext === 'pcm' || ext === 'opus') return ext;
  if (ext === 'ogg') return 'opus';
  return undefined;
}

/** The format of downloaded audio, from its bytes first, else its Content-Type. */
export function formatOfBytes(data: Buffer, contentType: string | undefined): Format | undefined {
  if (data.subarray(0, 4).toString('latin1') === 'RIFF') return 'wav';
  if (data.subarray(0, 4).toString('latin1') === 'OggS') return 'opus';
  if (data.subarray(0, 3).toString('latin1') === 'ID3' || (data[0] === 0xff && ((data[1] ?? 0) & 0xe0) === 0xe0)) return 'mp3';
  const type = contentType?.toLowerCase() ?? '';
  if (type.includes('mpeg')) return 'mp3';
  if (type.includes('wav')) return 'wav';
  if (type.includes('ogg') || type.includes('opus')) return 'opus';
  if (type.includes('pcm') || type.includes('l16')) return 'pcm';
  return undefined;
}

/** Write `file` to `out` (`-`: standard output, as is), converted when its name asks for another format. */
export async function writeAudioOut(out: string, file: { data: Buffer; contentType: string }, io: Io, whose: string): Promise<void> {
  if (out === '-') {
    io.stdout.write(file.data);
    return;
  }
  const source = formatOfBytes(file.data, file.contentType);
  const target = formatOfPath(out);
  const container = out.toLowerCase().match(/\.(\w+)$/)?.[1];
  if (source === undefined || source === target || (target === undefined && container === undefined)) {
    await writeFile(out, file.data);
    note(io, `wrote ${out} (${file.data.length} bytes, ${file.contentType})`);
    return;
  }
  const header = source === 'wav' ? parseWavHeader(file.data) : undefined;
  // The decoders read the real layout of mp3 and opus; these numbers only seed them.
  const info = { format: source, ...(header?.pcm ?? { sampleRate: 24_000, channels: 1, bitDepth: 16 }) };
  const { openFileSink } = await import('../sinks/index.js');
  const sink = openFileSink(out, info);
  await pipeline(Readable.from([file.data]), sink);
  await sink.done;
  note(io, `wrote ${out} (${(await stat(out)).size} bytes, converted from ${whose} ${source})`);
}
