/**
 * `voxpipe video PROMPT [--model M] [--seconds N] [--size WxH] [--start-frame IMAGE_URL|FILE] [--out FILE|-] [--json]`
 *
 * Creates a video job (`POST /media/videos/jobs`, with an Idempotency-Key),
 * waits for it (progress on standard error when it is a terminal) and writes
 * the MP4 to `--out` (`-`: standard output; default `<jobId>.mp4` in the
 * current directory). `--json` prints one JSON line on standard output.
 */
import type { MediaTask } from '../../http/resources/media.js';
import type { VideoReference } from '../../http/resources/videos.js';
import { numberOption, UsageError } from '../args.js';
import { intervalOption, jsonOption, mediaOutOption, Option, type CliCommand } from '../command.js';
import { ExitCode, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { checkOutput, clientOf, defaultModelOf, LocalFiles, mediaSummary, noteWritten, pollOptionsOf, writeResult } from './media-shared.js';
import { defined } from '../../defined.js';

interface Options {
  model?: string;
  seconds?: string;
  size?: string;
  startFrame?: string;
  out?: string;
  json?: boolean;
  intervalMs?: string;
}

export const command: CliCommand<Options> = {
  name: 'video',
  summary: 'a video from a prompt (and a start frame)',
  examples: [
    "voxpipe video 'waves on a beach' --seconds 5 --out waves.mp4",
    "voxpipe video 'the lighthouse at night' --start-frame lighthouse.png",
  ],
  declare(cmd) {
    cmd
      .argument('<PROMPT...>', 'what to show')
      .addOption(new Option('--model <M>', "default: the catalog's default"))
      .addOption(new Option('--seconds <N>', "0.1 to 60; default the model's"))
      .addOption(new Option('--size <WxH>', "default the model's"))
      .addOption(new Option('--start-frame <IMAGE_URL|FILE>', 'default none'))
      .addOption(mediaOutOption('.mp4'))
      .addOption(jsonOption())
      .addOption(intervalOption());
  },
  run,
};

/** Used when the service lists no video model. */
const FALLBACK_MODEL = 'svc-video-v1';

async function run(positionals: string[], values: Options, io: Io): Promise<number> {
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError('video needs a PROMPT that is not blank');
  await checkOutput(values, ['.mp4']); // the service returns MP4
  const seconds = numberOption(values.seconds, 'seconds', 0.1, 60);
  if (values.size !== undefined && !/^\d+x\d+$/.test(values.size)) throw new UsageError('--size must be <width>x<height>, e.g. 640x360');
  const service = await openServiceFor(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const client = clientOf(service.config);
    const model = values.model ?? defaultModelOf(await client.videos.models(), FALLBACK_MODEL);
    const references: VideoReference[] = values.startFrame === undefined ? [] : [{ role: 'start_frame', url: await files.urlOf(values.startFrame, '--start-frame') }];
    const handle = await client.videos.jobs.submit({
      prompt,
      model,
      ...defined({ seconds, size: values.size, references: references.length > 0 ? references : undefined }),
    });
    const task: MediaTask = await handle.result(pollOptionsOf<MediaTask>(service, io, 'video job', values.intervalMs));
    const file = await client.videos.jobs.download(task);
    const path = await writeResult(io, values.out, file.data, `${task.id}.mp4`);
    if (values.json) io.stdout.write(`${JSON.stringify(mediaSummary(task, { path, bytes: file.data.length, contentType: file.contentType }))}\n`);
    else noteWritten(io, path, file.data.length, 'video');
    return ExitCode.ok;
  } finally {
    await files.close();
    await service.close();
  }
}
