/**
 * `voxpipe lipsync --audio AUDIO_URL|FILE (--video VIDEO_URL|FILE | --image IMAGE_URL|FILE) [--duration SECONDS] [--model M] [--out FILE|-] [--json]`
 *
 * Creates a lip-sync task (`POST /lip-sync/tasks`, `video` or `image` input
 * mode), waits for it (progress on standard error when it is a terminal)
 * and writes the MP4 to `--out` (`-`: standard output; default `<taskId>.mp4`
 * in the current directory). Local files are served to the service from
 * 127.0.0.1 (see media-shared.ts). `--json` prints one JSON line.
 */
import type { MediaTask } from '../../http/resources/media.js';
import { numberOption, UsageError } from '../args.js';
import { intervalOption, jsonOption, mediaOutOption, Option, type CliCommand } from '../command.js';
import { ExitCode, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { checkOutput, clientOf, LocalFiles, mediaSummary, noteWritten, pollOptionsOf, writeResult } from './media-shared.js';
import { defined } from '../../defined.js';

interface Options {
  audio: string;
  video?: string;
  image?: string;
  duration?: string;
  model?: string;
  out?: string;
  json?: boolean;
  intervalMs?: string;
}

export const command: CliCommand<Options> = {
  name: 'lipsync',
  summary: 'a talking face: speech onto a video or a still image',
  examples: [
    "voxpipe lipsync --audio hello.wav --image face.png --out talking.mp4",
    "voxpipe lipsync --audio hello.wav --video face.mp4",
  ],
  declare(cmd) {
    cmd
      .addOption(new Option('--audio <AUDIO_URL|FILE>', 'the speech').makeOptionMandatory())
      .addOption(new Option('--video <VIDEO_URL|FILE>', 'the face, moving; one of --video and --image is needed').conflicts('image'))
      .addOption(new Option('--image <IMAGE_URL|FILE>', 'the face, still; one of --video and --image is needed'))
      .addOption(new Option('--duration <SECONDS>', "the audio's length, for the quota; default: measured where possible"))
      .addOption(new Option('--model <M>', "default: the catalog's default"))
      .addOption(mediaOutOption('.mp4'))
      .addOption(jsonOption())
      .addOption(intervalOption());
  },
  run: (_args, values, io) => run(values, io),
};

async function run(values: Options, io: Io): Promise<number> {
  if (values.video === undefined && values.image === undefined) throw new UsageError('lipsync needs one of --video and --image');
  await checkOutput(values, ['.mp4']); // the service returns MP4
  const durationSeconds = numberOption(values.duration, 'duration', 0.001, 3_600);
  const service = await openServiceFor(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const client = clientOf(service.config);
    const audioUrl = await files.urlOf(values.audio, '--audio');
    const visual = values.video !== undefined ? { inputMode: 'video' as const, videoUrl: await files.urlOf(values.video, '--video') } : { inputMode: 'image' as const, imageUrl: await files.urlOf(values.image!, '--image') };
    const handle = await client.lipsync.tasks.submit({
      ...visual,
      audioUrl,
      ...defined({ model: values.model, durationSeconds }),
    });
    const task: MediaTask = await handle.result(pollOptionsOf<MediaTask>(service, io, 'lip-sync task', values.intervalMs));
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
