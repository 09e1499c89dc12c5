/**
 * `voxpipe image PROMPT [--model M] [--aspect-ratio W:H] [--edit IMAGE_URL|FILE] [--out FILE|-] [--json]`
 *
 * Creates an image job (`POST /media/images/jobs`, with an Idempotency-Key),
 * waits for it (progress on standard error when it is a terminal) and writes
 * the PNG to `--out` (`-`: standard output; default `<jobId>.png` in the
 * current directory). `--edit` edits a picture (URL or local file).
 * `--json` prints one JSON line on standard output.
 */
import type { MediaTask } from '../../http/resources/media.js';
import { UsageError } from '../args.js';
import { intervalOption, jsonOption, mediaOutOption, Option, type CliCommand } from '../command.js';
import { ExitCode, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { checkOutput, clientOf, defaultModelOf, LocalFiles, mediaSummary, noteWritten, pollOptionsOf, writeResult } from './media-shared.js';

interface Options {
  model?: string;
  aspectRatio?: string;
  edit?: string;
  out?: string;
  json?: boolean;
  intervalMs?: string;
}

export const command: CliCommand<Options> = {
  name: 'image',
  summary: 'an image from a prompt (or an edited picture)',
  examples: [
    "voxpipe image 'a lighthouse at dusk' --out lighthouse.png",
    "voxpipe image 'make the sky red' --edit lighthouse.png --out red.png",
  ],
  declare(cmd) {
    cmd
      .argument('<PROMPT...>', 'what to draw')
      .addOption(new Option('--model <M>', "default: the catalog's default"))
      .addOption(new Option('--aspect-ratio <W:H>', "default the model's"))
      .addOption(new Option('--edit <IMAGE_URL|FILE>', 'edit this picture instead; default none'))
      .addOption(mediaOutOption('.png'))
      .addOption(jsonOption())
      .addOption(intervalOption());
  },
  run,
};

/** Used when the service lists no image model. */
const FALLBACK_MODEL = 'svc-image-v1';

async function run(positionals: string[], values: Options, io: Io): Promise<number> {
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError('image needs a PROMPT that is not blank');
  await checkOutput(values, ['.png']); // the service returns PNG
  const service = await openServiceFor(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const client = clientOf(service.config);
    const model = values.model ?? defaultModelOf(await client.images.models(), FALLBACK_MODEL);
    const imageUrl = values.edit === undefined ? undefined : await files.urlOf(values.edit, '--edit');
    const handle = await client.images.jobs.submit({
      prompt,
      model,
      ...(values.aspectRatio !== undefined && { aspectRatio: values.aspectRatio }),
      ...(imageUrl !== undefined && { generationType: 'edit', imageUrl }),
    });
    const task: MediaTask = await handle.result(pollOptionsOf<MediaTask>(service, io, 'image job', values.intervalMs));
    const file = await client.images.jobs.download(task);
    const path = await writeResult(io, values.out, file.data, `${task.id}.png`);
    if (values.json) io.stdout.write(`${JSON.stringify(mediaSummary(task, { path, bytes: file.data.length, contentType: file.contentType }))}\n`);
    else noteWritten(io, path, file.data.length, 'image');
    return ExitCode.ok;
  } finally {
    await files.close();
    await service.close();
  }
}
