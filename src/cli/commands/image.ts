/**
 * `voxpipe image PROMPT [--model M] [--aspect-ratio W:H] [--edit IMAGE_URL|FILE] [--out FILE|-] [--json]`
 *
 * Creates an image job (`POST /media/images/jobs`, with an Idempotency-Key),
 * waits for it (progress on standard error when it is a terminal) and writes
 * the PNG to `--out` (`-`: standard output; default `<jobId>.png` in the
 * current directory). `--edit` edits a picture (URL or local file).
 * `--json` prints one JSON line on standard output.
 */
import { parseArgs } from 'node:util';
import type { MediaTask } from '../../http/resources/media.js';
import { usage, UsageError } from '../args.js';
import { ExitCode, type Io } from '../io.js';
import { openService } from '../service.js';
import { checkOutput, clientOf, defaultModelOf, LocalFiles, mediaSummary, noteWritten, pollOptionsOf, writeResult } from './media-shared.js';

export const USAGE = 'voxpipe image PROMPT [--model M] [--aspect-ratio W:H] [--edit IMAGE_URL|FILE] [--out FILE|-] [--json]';

const OPTIONS = {
  model: { type: 'string' },
  'aspect-ratio': { type: 'string' },
  edit: { type: 'string' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  'interval-ms': { type: 'string' },
} as const;

/** Used when the service lists no image model. */
const FALLBACK_MODEL = 'svc-image-v1';

export async function run(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError(`image needs a PROMPT\n  ${USAGE}`);
  await checkOutput(values, ['.png']); // the service returns PNG
  const service = await openService(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const client = clientOf(service.config);
    const model = values.model ?? defaultModelOf(await client.images.models(), FALLBACK_MODEL);
    const imageUrl = values.edit === undefined ? undefined : await files.urlOf(values.edit, '--edit');
    const handle = await client.images.jobs.submit({
      prompt,
      model,
      ...(values['aspect-ratio'] !== undefined && { aspectRatio: values['aspect-ratio'] }),
      ...(imageUrl !== undefined && { generationType: 'edit', imageUrl }),
    });
    const task: MediaTask = await handle.result(pollOptionsOf<MediaTask>(service, io, 'image job', values['interval-ms']));
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
