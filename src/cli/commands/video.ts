/**
 * `voxpipe video PROMPT [--model M] [--seconds N] [--size WxH] [--start-frame IMAGE_URL|FILE] [--out FILE|-] [--json]`
 *
 * Creates a video job (`POST /media/videos/jobs`, with an Idempotency-Key),
 * waits for it (progress on standard error when it is a terminal) and writes
 * the MP4 to `--out` (`-`: standard output; default `<jobId>.mp4` in the
 * current directory). `--json` prints one JSON line on standard output.
 */
import { parseArgs } from 'node:util';
import type { MediaTask } from '../../http/resources/media.js';
import type { VideoReference } from '../../http/resources/videos.js';
import { numberOption, usage, UsageError } from '../args.js';
import { ExitCode, type Io } from '../io.js';
import { openService } from '../service.js';
import { checkOutput, clientOf, defaultModelOf, LocalFiles, mediaSummary, noteWritten, pollOptionsOf, writeResult } from './media-shared.js';

export const USAGE = 'voxpipe video PROMPT [--model M] [--seconds N] [--size WxH] [--start-frame IMAGE_URL|FILE] [--out FILE|-] [--json]';

const OPTIONS = {
  model: { type: 'string' },
  seconds: { type: 'string' },
  size: { type: 'string' },
  'start-frame': { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  'interval-ms': { type: 'string' },
} as const;

/** Used when the service lists no video model. */
const FALLBACK_MODEL = 'svc-video-v1';

export async function run(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError(`video needs a PROMPT\n  ${USAGE}`);
  await checkOutput(values, ['.mp4']); // the service returns MP4
  const seconds = numberOption(values.seconds, 'seconds', 0.1, 60);
  if (values.size !== undefined && !/^\d+x\d+$/.test(values.size)) throw new UsageError('--size must be <width>x<height>, e.g. 640x360');
  const service = await openService(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const client = clientOf(service.config);
    const model = values.model ?? defaultModelOf(await client.videos.models(), FALLBACK_MODEL);
    const references: VideoReference[] = values['start-frame'] === undefined ? [] : [{ role: 'start_frame', url: await files.urlOf(values['start-frame'], '--start-frame') }];
    const handle = await client.videos.jobs.submit({
      prompt,
      model,
      ...(seconds !== undefined && { seconds }),
      ...(values.size !== undefined && { size: values.size }),
      ...(references.length > 0 && { references }),
    });
    const task: MediaTask = await handle.result(pollOptionsOf<MediaTask>(service, io, 'video job', values['interval-ms']));
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
