/**
 * `voxpipe lipsync --audio AUDIO_URL|FILE (--video VIDEO_URL|FILE | --image IMAGE_URL|FILE) [--duration SECONDS] [--model M] [--out FILE|-] [--json]`
 *
 * Creates a lip-sync task (`POST /lip-sync/tasks`, `video` or `image` input
 * mode), waits for it (progress on standard error when it is a terminal)
 * and writes the MP4 to `--out` (`-`: standard output; default `<taskId>.mp4`
 * in the current directory). Local files are served to the service from
 * 127.0.0.1 (see media-shared.ts). `--json` prints one JSON line.
 */
import { parseArgs } from 'node:util';
import type { MediaTask } from '../../http/resources/media.js';
import { numberOption, usage, UsageError } from '../args.js';
import { ExitCode, type Io } from '../io.js';
import { openService } from '../service.js';
import { checkOutput, clientOf, LocalFiles, mediaSummary, noteWritten, pollOptionsOf, writeResult } from './media-shared.js';

export const USAGE = 'voxpipe lipsync --audio AUDIO_URL|FILE (--video VIDEO_URL|FILE | --image IMAGE_URL|FILE) [--duration SECONDS] [--model M] [--out FILE|-] [--json]';

const OPTIONS = {
  audio: { type: 'string' },
  video: { type: 'string' },
  image: { type: 'string' },
  duration: { type: 'string' },
  model: { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  'interval-ms': { type: 'string' },
} as const;

export async function run(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  if (positionals.length > 0) throw new UsageError(`lipsync takes no positional arguments (got ${JSON.stringify(positionals[0])})\n  ${USAGE}`);
  if (values.audio === undefined) throw new UsageError(`lipsync needs --audio\n  ${USAGE}`);
  if ((values.video === undefined) === (values.image === undefined)) throw new UsageError(`lipsync needs exactly one of --video and --image\n  ${USAGE}`);
  await checkOutput(values, ['.mp4']); // the service returns MP4
  const durationSeconds = numberOption(values.duration, 'duration', 0.001, 3_600);
  const service = await openService(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const client = clientOf(service.config);
    const audioUrl = await files.urlOf(values.audio, '--audio');
    const visual = values.video !== undefined ? { inputMode: 'video' as const, videoUrl: await files.urlOf(values.video, '--video') } : { inputMode: 'image' as const, imageUrl: await files.urlOf(values.image!, '--image') };
    const handle = await client.lipsync.tasks.submit({
      ...visual,
      audioUrl,
      ...(values.model !== undefined && { model: values.model }),
      ...(durationSeconds !== undefined && { durationSeconds }),
    });
    const task: MediaTask = await handle.result(pollOptionsOf<MediaTask>(service, io, 'lip-sync task', values['interval-ms']));
    const file = await client.lipsync.tasks.download(task);
    const path = await writeResult(io, values.out, file.data, `${task.id}.mp4`);
    if (values.json) io.stdout.write(`${JSON.stringify(mediaSummary(task, { path, bytes: file.data.length, contentType: file.contentType }))}\n`);
    else noteWritten(io, path, file.data.length, 'lip-sync video');
    return ExitCode.ok;
  } finally {
    await files.close();
    await service.close();
  }
}
