/**
 * `voxpipe jobs create|get|list|wait|download`: asynchronous TTS jobs.
 *
 * `create` recovers a lost 202 (lists recent jobs and matches createdAt,
 * textFingerprint, voiceId and engineModelId before resubmitting), so running
 * it again after a timeout never creates a second job. The embedded default
 * keeps its jobs in its data directory, and finishes a job `create` started
 * before the process exits, so `jobs download` in the next command finds it
 * (with `--ephemeral`: `create --wait --out FILE`).
 */
import { parseArgs } from 'node:util';
import { createClient, type VoxpipeClient } from '../http/index.js';
import type { TtsJob } from '../http/resources/jobs.js';
import type { JobEvent } from '../http/job-handle.js';
import { AUDIO_FORMATS } from '../protocol/audio.js';
import { DEFAULT_MODEL } from '../protocol/constants.js';
import { defaultVoice } from '../speech.js';
import { choice, numberOption, usage, UsageError } from './args.js';
import { ExitCode, note, type Io } from './io.js';
import { checkOutPath } from './out-path.js';
import { formatOfPath, writeAudioOut } from './audio-out.js';
import { openService } from './service.js';

export const JOBS_USAGE =
  'voxpipe jobs create TEXT [--voice ID] [--model ID] [--format F] [--speed N] [--wait] [--out FILE] [--json] | get ID | list [--status S] [--limit N] [--page N] | wait ID | download ID --out FILE';

const OPTIONS = {
  voice: { type: 'string' },
  model: { type: 'string' },
  format: { type: 'string' },
  speed: { type: 'string' },
  wait: { type: 'boolean' },
  out: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  status: { type: 'string' },
  limit: { type: 'string' },
  page: { type: 'string' },
  'interval-ms': { type: 'string' },
} as const;

/** The fields of a job a person or a script wants to see. */
function view(job: TtsJob): Record<string, unknown> {
  return {
    taskId: job.id,
    status: job.status,
    characters: job.characters,
    voiceId: job.voiceId,
    engineModelId: job.engineModelId,
    creditsCharged: job.creditsCharged,
    createdAt: job.createdAt,
    downloadReady: job.downloadReady,
    ...(job.errorCode !== undefined && { errorCode: job.errorCode, errorMessage: job.errorMessage }),
  };
}

function progress(io: Io): ((e: JobEvent<TtsJob>) => void) | undefined {
  if (!(io.stderr as { isTTY?: boolean }).isTTY) return undefined;
  return (e) => io.stderr.write(`\rvoxpipe: job ${e.task.id} ${e.task.status}   `);
}

export async function jobs(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  const [action, ...rest] = positionals;
  const intervalMs = numberOption(values['interval-ms'], 'interval-ms', 10, 60_000);
  const poll = { ...(intervalMs !== undefined && { intervalMs, maxIntervalMs: Math.max(intervalMs, 5_000) }), onProgress: progress(io) };
  const print = (value: unknown) => io.stdout.write(`${values.json ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
  // Before any request: no job is paid for that cannot be written.
  if (values.out !== undefined) await checkOutPath(values.out);
  const service = await openService(io);
  try {
    const client: VoxpipeClient = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    const need = (what: string) => {
      const v = rest[0];
      if (!v) throw new UsageError(`jobs ${action} needs ${what}`);
      return v;
    };
    switch (action) {
      case 'create': {
        const text = rest.join(' ');
        if (!text.trim()) throw new UsageError('jobs create needs TEXT');
        const model = values.model ?? DEFAULT_MODEL;
        const format = choice(values.format, 'format', AUDIO_FORMATS) ?? formatOfPath(values.out);
        const speed = numberOption(values.speed, 'speed', 0.5, 2);
        const voiceId = values.voice ?? (await defaultVoice(service.config, model));
        const { job, recovered } = await client.jobs.createOrRecover({ text, voiceId, modelId: model, ...(format && { format }), ...(speed !== undefined && { speed }) });
        if (recovered) note(io, `found the job created by an earlier attempt (${job.id}); not resubmitted`);
        let final = job;
        if (values.wait || values.out) final = await client.jobs.wait(job.id, poll);
        if (values.out) await download(client, final, values.out, io);
        print(view(final));
        return ExitCode.ok;
      }
      case 'get':
        print(view(await client.jobs.get(need('ID'))));
        return ExitCode.ok;
      case 'list': {
        const limit = numberOption(values.limit, 'limit', 1, 100);
        const page = numberOption(values.page, 'page', 1);
        const result = await client.jobs.list({ ...(limit !== undefined && { limit }), ...(page !== undefined && { page }), ...(values.status && { status: values.status }) });
        print({ items: result.items.map(view), hasMore: result.hasMore });
        return ExitCode.ok;
      }
      case 'wait':
        print(view(await client.jobs.wait(need('ID'), poll)));
        return ExitCode.ok;
      case 'download': {
        if (!values.out) throw new UsageError('jobs download needs --out FILE');
        const job = await client.jobs.get(need('ID'));
        await download(client, job, values.out, io);
        return ExitCode.ok;
      }
      default:
        throw new UsageError(`jobs needs one of create, get, list, wait, download (got ${JSON.stringify(action ?? '')})`);
    }
  } finally {
    await service.close();
  }
}

async function download(client: VoxpipeClient, job: TtsJob, out: string, io: Io): Promise<void> {
  await writeAudioOut(out, await client.jobs.download(job), io, "the job's");
}
