/**
 * `--out` checked before any request is made, so no credits are spent on a
 * file that cannot be written: the folder exists and is writable, the path
 * is not a folder, and the extension is one voxpipe can write (directly, or
 * through ffmpeg when it is installed).
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { VoxpipeError } from '../errors.js';

/** Written without ffmpeg. */
export const DIRECT_EXTENSIONS = ['.wav', '.pcm', '.raw', '.mp3', '.opus', '.ogg'] as const;
/** Written through ffmpeg (a transcoding sink). */
export const FFMPEG_EXTENSIONS = ['.flac', '.m4a', '.aac', '.oga', '.webm', '.mka', '.aiff', '.aif', '.caf', '.au', '.wma'] as const;

const WRITABLE: ReadonlySet<string> = new Set([...DIRECT_EXTENSIONS, ...FFMPEG_EXTENSIONS]);

/**
 * @param extensions the extensions this command can write; default every audio extension above
 * @throws VoxpipeError `output_unwritable` (naming the path and why) or `invalid_arguments` (an extension it cannot write)
 */
export async function checkOutPath(path: string, extensions: ReadonlySet<string> = WRITABLE): Promise<void> {
  if (path === '-') return;
  const full = resolve(path);
  const existing = await stat(full).catch(() => undefined);
  if (existing?.isDirectory()) throw new VoxpipeError('output_unwritable', `cannot write ${path}: it is a folder; give a file name`);
  const folder = dirname(full);
  const parent = await stat(folder).catch(() => undefined);
  if (!parent) throw new VoxpipeError('output_unwritable', `cannot write ${path}: the folder ${folder} does not exist`);
  if (!parent.isDirectory()) throw new VoxpipeError('output_unwritable', `cannot write ${path}: ${folder} is not a folder`);
  try {
    await access(existing ? full : folder, constants.W_OK);
  } catch {
    throw new VoxpipeError('output_unwritable', `cannot write ${path}: permission denied`);
  }
  const extension = extname(full).toLowerCase();
  if (!extensions.has(extension)) {
    const known = [...extensions].join(' ');
    throw new VoxpipeError('invalid_arguments', `cannot write ${extension ? `${extension} files` : 'a file without an extension'} (${path}); use one of: ${known}`);
  }
}
