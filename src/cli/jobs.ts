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
import { createClient, type VoxpipeClient } from '../http/index.js';
import type { TtsJob } from '../http/resources/jobs.js';
import type { JobEvent } from '../http/job-handle.js';
import { JobFailedError, TaskStatus } from '../http/task.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/audio.js';
import { DEFAULT_MODEL } from '../protocol/constants.js';
import { numberOption, UsageError } from './args.js';
import { intervalOption, jsonOption, Option, type CliCommand } from './command.js';
import { ExitCode, note, type Io } from './io.js';
import { checkOutPath } from './out-path.js';
import { formatOfPath, writeAudioOut } from './audio-out.js';
import { openServiceFor } from './service.js';
import { emit, table } from './output.js';
import { defined } from '../defined.js';
import { VoxpipeError } from '../errors.js';
import { LIMITS } from '../protocol/limits.js';
import { buildWavHeader, WAV_UNKNOWN_SIZE } from '../protocol/wav.js';
import { parseWavHeader } from '../sinks/wav-header.js';
import { cutPoint } from './rollover.js';
import { resolveVoice } from './voice-name.js';

interface Options {
  voice?: string;
  model?: string;
  format?: AudioFormat;
  speed?: string;
  wait?: boolean;
  out?: string;
  json?: boolean;
  status?: string;
  limit?: string;
  page?: string;
  intervalMs?: string;
}

const ACTIONS = ['create', 'get', 'list', 'wait', 'download'] as const;
type Action = (typeof ACTIONS)[number];
const isAction = (word: string | undefined): word is Action => (ACTIONS as readonly (string | undefined)[]).includes(word);

export const command: CliCommand<Options> = {
  name: 'jobs',
  summary: 'asynchronous TTS jobs: create, get, list, wait, download',
  examples: [
    "voxpipe jobs create 'A long chapter...' --wait --out chapter.mp3",
    "voxpipe jobs list --status completed",
    "voxpipe jobs download JOB_ID --out chapter.wav",
  ],
  declare(cmd) {
    cmd
      .usage('create TEXT [options] | get ID | list | wait ID | download ID --out FILE')
      .argument('<ACTION>', 'create TEXT: an asynchronous TTS job; get ID, wait ID: one job (wait polls until it ends, 3 s growing to 5 s); list: jobs, newest first; download ID: the audio of a finished job')
      .argument('[ARGS...]', "the action's arguments")
      .addOption(new Option('--voice <ID>', "create: default the deployment's default voice"))
      .addOption(new Option('--model <ID>', `create: default ${DEFAULT_MODEL}`))
      .addOption(new Option('--format <F>', "create: default from the --out extension, else the service's").choices(AUDIO_FORMATS))
      .addOption(new Option('--speed <N>', "create: 0.5 to 2; default the service's (1)"))
      .addOption(new Option('--wait', 'create: wait for the job to end; default off'))
      .addOption(new Option('-o, --out <FILE>', 'create, download: write the audio there (converted to what the extension says)'))
      .addOption(new Option('--status <S>', 'list: only jobs in this state; default all'))
      .addOption(new Option('--limit <N>', "list: 1 to 100; default the service's"))
      .addOption(new Option('--page <N>', 'list: from 1; default 1'))
      .addOption(jsonOption())
      .addOption(intervalOption());
  },
  run,
};

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

const JOB_COLUMNS = ['taskId', 'status', 'characters', 'creditsCharged', 'createdAt'] as const;

/** One job: its id, status, size, charge and age on one line (and its error when it failed). */
function humanJob(job: Record<string, unknown>): string {
  const error = job['errorCode'] !== undefined ? `\n${String(job['errorCode'])}: ${String(job['errorMessage'] ?? '')}` : '';
  return `${table([JOB_COLUMNS.map((k) => job[k])], ['TASK', 'STATUS', 'CHARS', 'CREDITS', 'CREATED'])}${error}`;
}

function jobTable(jobs: Record<string, unknown>[]): string {
  return table(jobs.map((j) => JOB_COLUMNS.map((k) => j[k])), ['TASK', 'STATUS', 'CHARS', 'CREDITS', 'CREATED']);
}

function progress(io: Io): ((e: JobEvent<TtsJob>) => void) | undefined {
  if (!(io.stderr as { isTTY?: boolean }).isTTY) return undefined;
  return (e) => io.stderr.write(`\rvoxpipe: job ${e.task.id} ${e.task.status}   `);
}

async function run(positionals: string[], values: Options, io: Io): Promise<number> {
  const [action, ...rest] = positionals;
  if (!isAction(action)) throw new UsageError(`jobs needs one of ${ACTIONS.join(', ')} (got ${JSON.stringify(action ?? '')})`);
  const intervalMs = numberOption(values.intervalMs, 'interval-ms', 10, 60_000);
  const poll = { ...(intervalMs !== undefined && { intervalMs, maxIntervalMs: Math.max(intervalMs, 5_000) }), onProgress: progress(io) };
  const print = <T>(value: T, human: (v: T) => string) => emit(io, values.json, value, human);
  // Before any request: no job is paid for that cannot be written.
  if (values.out !== undefined) await checkOutPath(values.out);
  const service = await openServiceFor(io);
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
        const format = values.format ?? formatOfPath(values.out);
        const speed = numberOption(values.speed, 'speed', 0.5, 2);
        const voiceId = values.voice !== undefined ? await resolveVoice(service.config, values.voice) : await (await import('../speech.js')).defaultVoice(service.config, model);
        const parts = splitText(text, LIMITS.httpTextMaxChars);
        if (parts.length > 1) return createSplit(client, parts, { voiceId, model, format, speed }, values, io, poll, print);
        const { job, recovered } = await client.jobs.createOrRecover({ text, voiceId, modelId: model, ...defined({ format, speed }) });
        if (recovered) note(io, `found the job created by an earlier attempt (${job.id}); not resubmitted`);
        let final = job;
        if (values.wait || values.out) final = await client.jobs.wait(job.id, poll);
        if (values.out) {
          // A failed job has no audio: its own error code, and nothing downloaded or written.
          if (final.status === TaskStatus.failed) {
            print(view(final), humanJob);
            throw new JobFailedError(final);
          }
          await download(client, final, values.out, io);
        }
        print(view(final), humanJob);
        return ExitCode.ok;
      }
      case 'get':
        print(view(await client.jobs.get(need('ID'))), humanJob);
        return ExitCode.ok;
      case 'list': {
        const limit = numberOption(values.limit, 'limit', 1, 100);
        const page = numberOption(values.page, 'page', 1);
        const result = await client.jobs.list(defined({ limit, page, status: values.status }));
        print({ items: result.items.map(view), hasMore: result.hasMore }, (v) => (v.items.length === 0 ? 'no jobs' : `${jobTable(v.items)}${v.hasMore ? '\n(more: --page N)' : ''}`));
        return ExitCode.ok;
      }
      case 'wait':
        print(view(await client.jobs.wait(need('ID'), poll)), humanJob);
        return ExitCode.ok;
      case 'download': {
        if (!values.out) throw new UsageError('jobs download needs --out FILE');
        // A job still running (the local service runs it on after `jobs create` returns) is waited for.
        const job = await client.jobs.wait(need('ID'), poll);
        if (job.status === TaskStatus.failed) throw new JobFailedError(job);
        await download(client, job, values.out, io);
        return ExitCode.ok;
      }
    }
  } finally {
    await service.close();
  }
}

/**
 * A text over the job limit (spec 8: 5,000 characters): cut between
 * sentences into parts within it, said before any job is created; one job
 * per part; with --out, each part's WAV is fetched and their audio joined
 * in order into one file.
 */
async function createSplit(
  client: VoxpipeClient,
  parts: string[],
  o: { voiceId: string; model: string; format: AudioFormat | undefined; speed: number | undefined },
  values: Options,
  io: Io,
  poll: Parameters<VoxpipeClient['jobs']['wait']>[1],
  print: <T>(value: T, human: (v: T) => string) => void,
): Promise<number> {
  const total = parts.reduce((n, p) => n + p.length, 0);
  note(io, `the text has ${total} characters, over the ${LIMITS.httpTextMaxChars} of one job: ${parts.length} jobs, cut between sentences${values.out ? `, their audio joined in order into ${values.out}` : ''}`);
  // Joined as PCM: each part is fetched as WAV whatever --format says.
  const format = values.out ? 'wav' : o.format;
  const jobs: TtsJob[] = [];
  for (const [i, text] of parts.entries()) {
    const { job } = await client.jobs.createOrRecover({ text, voiceId: o.voiceId, modelId: o.model, ...defined({ format, speed: o.speed }) });
    jobs.push(job);
    if (!values.json) note(io, `job ${i + 1}/${parts.length}: ${job.id} (${text.length} characters)`);
  }
  const finals: TtsJob[] = [];
  if (values.wait || values.out) {
    const pcm: Buffer[] = [];
    let layout: { sampleRate: number; channels: number; bitDepth: number } | undefined;
    for (const [i, job] of jobs.entries()) {
      const final = await client.jobs.wait(job.id, poll);
      finals.push(final);
      if (!values.out) continue;
      try {
        const file = await client.jobs.download(final);
        const header = parseWavHeader(file.data);
        if (!header) throw new VoxpipeError('decode_failed', `job ${final.id} did not answer a WAV file`);
        layout ??= header.pcm;
        const end = header.dataBytes === undefined || header.dataBytes === WAV_UNKNOWN_SIZE ? file.data.length : Math.min(file.data.length, header.dataOffset + header.dataBytes);
        pcm.push(file.data.subarray(header.dataOffset, end));
      } catch (err) {
        const done = jobs.slice(0, i).map((j) => j.id).join(', ');
        note(io, `stopped at job ${i + 1}/${jobs.length}; nothing written to ${values.out}${done ? `; jobs done so far: ${done} (jobs download ID --out FILE fetches each)` : ''}`);
        throw err;
      }
      if (!values.json) note(io, `job ${i + 1}/${jobs.length} done`);
    }
    if (values.out && layout) {
      const data = Buffer.concat(pcm);
      const wav = Buffer.concat([Buffer.from(buildWavHeader(layout, data.length)), data]);
      await writeAudioOut(values.out, { data: wav, contentType: 'audio/wav' }, io, 'the jobs\'');
    }
  }
  const items = (finals.length > 0 ? finals : jobs).map(view);
  print({ items }, (v) => jobTable(v.items));
  return ExitCode.ok;
}

/** The text in parts of at most `max` characters, cut between sentences (else between words). */
export function splitText(text: string, max: number): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const cut = cutPoint(rest, max);
    parts.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) parts.push(rest);
  return parts.filter((p) => p.length > 0);
}

async function download(client: VoxpipeClient, job: TtsJob, out: string, io: Io): Promise<void> {
  await writeAudioOut(out, await client.jobs.download(job), io, "the job's");
}
