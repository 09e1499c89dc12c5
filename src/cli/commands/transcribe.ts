/**
 * `voxpipe transcribe AUDIO_URL|FILE [--model M] [--language TAG] [--duration SECONDS] [--json] [--interval-ms N]`
 *
 * Creates a speech-to-text task (`POST /asr/tasks`), waits for it (progress
 * on standard error when it is a terminal) and prints the transcript on
 * standard output, or one JSON line with `--json`. A local FILE is served to
 * the service from 127.0.0.1 (see media-shared.ts). A failed task exits
 * non-zero with one standard-error line naming its error code.
 */
import type { AsrTask } from '../../http/resources/asr.js';
import { numberOption } from '../args.js';
import { intervalOption, jsonOption, Option, type CliCommand } from '../command.js';
import { ExitCode, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { clientOf, LocalFiles, pollOptionsOf } from './media-shared.js';
import { defined } from '../../defined.js';

interface Options {
  model?: string;
  language?: string;
  duration?: string;
  json?: boolean;
  intervalMs?: string;
}

export const command: CliCommand<Options> = {
  name: 'transcribe',
  summary: 'speech to text',
  examples: [
    "voxpipe transcribe meeting.wav",
    "voxpipe transcribe https://example.com/talk.mp3 --language en --json",
  ],
  declare(cmd) {
    cmd
      .argument('<AUDIO_URL|FILE>', 'a local file is served to the service from 127.0.0.1 (embedded default or serve --allow-private-urls)')
      .addOption(new Option('--model <M>', "default: the service's"))
      .addOption(new Option('--language <TAG>', 'default: detected'))
      .addOption(new Option('--duration <SECONDS>', "the audio's length, for the quota; default: measured where possible"))
      .addOption(jsonOption())
      .addOption(intervalOption());
  },
  run,
};

async function run(positionals: string[], values: Options, io: Io): Promise<number> {
  const durationSeconds = numberOption(values.duration, 'duration', 0.001, 600);
  const service = await openServiceFor(io);
  const files = new LocalFiles(service.config.baseUrl);
  try {
    const audioUrl = await files.urlOf(positionals[0]!, 'audio');
    const client = clientOf(service.config);
    const handle = await client.asr.submit(defined({ audioUrl, model: values.model, language: values.language, durationSeconds }));
    const task: AsrTask = await handle.result(pollOptionsOf<AsrTask>(service, io, 'transcription', values.intervalMs));
    const transcript = task.transcript ?? '';
    if (values.json) {
      const raw = task.raw;
      io.stdout.write(`${JSON.stringify({ taskId: task.id, status: task.status, model: task.model, transcript, durationSeconds: raw['durationSeconds'] ?? null, creditsCharged: task.creditsCharged })}\n`);
    } else io.stdout.write(`${transcript}\n`);
    return ExitCode.ok;
  } finally {
    await files.close();
    await service.close();
  }
}
