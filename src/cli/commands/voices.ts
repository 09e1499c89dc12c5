/**
 * `voxpipe voices [list] [--type public|personal] [--model ID] [--json]`,
 * `voxpipe voices clone NAME AUDIO_URL|FILE [--language TAG] [--description TEXT] [--idempotency-key K] [--json]`,
 * `voxpipe voices delete VOICE_ID [--json]`.
 *
 * `clone` sends an http(s) URL as `audioUrl` (the service fetches it; it
 * must be publicly reachable) and anything else as a local file, uploaded
 * as multipart. Standard output carries the data (the list, the new voice
 * id, or one JSON line with `--json`); notes go to standard error.
 */
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { createClient, type VoxpipeClient } from '../../http/index.js';
import { pcmDurationMs } from '../../protocol/audio.js';
import { LIMITS } from '../../protocol/limits.js';
import { readWavHeader } from '../../protocol/wav.js';
import type { CloneVoiceParams } from '../../http/resources/voices.js';
import { UsageError } from '../args.js';
import { jsonOption, Option, type CliCommand } from '../command.js';
import { ExitCode, note, unreadable, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { emit, table as grid } from '../output.js';

interface Options {
  json?: boolean;
  type?: 'public' | 'personal';
  model?: string;
  language?: string;
  description?: string;
  idempotencyKey?: string;
}

const ACTIONS = ['list', 'clone', 'delete'] as const;

export const command: CliCommand<Options> = {
  name: 'voices',
  summary: 'list, clone and delete voices',
  examples: [
    "voxpipe voices",
    "voxpipe voices clone Narrator ./sample.wav --language en",
    "voxpipe voices delete VOICE_ID",
  ],
  declare(cmd) {
    cmd
      .usage('[list] [options] | clone NAME AUDIO_URL|FILE [options] | delete VOICE_ID')
      .argument('[ACTION]', 'list (the default); clone NAME AUDIO_URL|FILE: a personal voice from 10 s to 5 min of speech; delete VOICE_ID: a personal voice')
      .argument('[ARGS...]', "the action's arguments")
      .addOption(new Option('--type <TYPE>', 'list: only these; default both').choices(['public', 'personal']))
      .addOption(new Option('--model <ID>', 'list: voices of one model; default all'))
      .addOption(new Option('--language <TAG>', "clone: the speech's language; default: the service's detection"))
      .addOption(new Option('--description <TEXT>', 'clone: default none'))
      .addOption(new Option('--idempotency-key <K>', 'clone: resending with the same key replays the first result; default none'))
      .addOption(jsonOption());
  },
  run,
};

/** MIME types of reference audio files, by extension. */
const AUDIO_TYPES: Record<string, string> = { '.wav': 'audio/wav', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg', '.opus': 'audio/ogg', '.flac': 'audio/flac', '.m4a': 'audio/mp4', '.webm': 'audio/webm' };

/** A table row per voice: id, type, language, default model, name (`say --voice` takes the id or the name). */
function table(rows: Record<string, unknown>[]): string {
  return grid(
    rows.map((r) => [r['voiceId'], r['type'], r['language'], r['defaultEngineModelId'], r['name']]),
    ['VOICE', 'TYPE', 'LANGUAGE', 'DEFAULT MODEL', 'NAME'],
  );
}

/** A local WAV file outside the service's 10 s to 5 min: refused here, before any request (other formats: the service says). */
function tooShortOrLong(source: string, audio: Uint8Array): void {
  const read = readWavHeader(audio);
  if (read.status !== 'header') return;
  const { pcm, dataOffset, dataBytes } = read.header;
  const seconds = pcmDurationMs(dataBytes ?? audio.length - dataOffset, pcm) / 1000;
  if (seconds < LIMITS.cloneMinSeconds || seconds > LIMITS.cloneMaxSeconds) {
    throw new UsageError(`${source} lasts ${seconds.toFixed(1)} s; a clone takes ${LIMITS.cloneMinSeconds} s to ${LIMITS.cloneMaxSeconds / 60} min of speech`);
  }
}

async function cloneParams(name: string, source: string, values: Options): Promise<CloneVoiceParams> {
  const params: CloneVoiceParams = { name };
  if (values.language !== undefined) params.language = values.language;
  if (values.description !== undefined) params.description = values.description;
  if (values.idempotencyKey !== undefined) params.idempotencyKey = values.idempotencyKey;
  if (/^https?:\/\//i.test(source)) {
    params.audioUrl = source;
    return params;
  }
  try {
    params.audio = await readFile(source);
  } catch (err) {
    throw new UsageError(unreadable(source, err));
  }
  tooShortOrLong(source, params.audio);
  params.fileName = basename(source);
  params.contentType = AUDIO_TYPES[extname(source).toLowerCase()] ?? 'application/octet-stream';
  return params;
}

async function run(positionals: string[], values: Options, io: Io): Promise<number> {
  const [action = 'list', ...rest] = positionals;
  const type = values.type;
  if (!(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`voices needs one of ${ACTIONS.join(', ')} (got ${JSON.stringify(action)})`);
  if (action === 'clone' && rest.length !== 2) throw new UsageError('voices clone needs NAME and AUDIO_URL or FILE');
  if (action === 'delete' && rest.length !== 1) throw new UsageError('voices delete needs VOICE_ID');
  const service = await openServiceFor(io);
  try {
    const client: VoxpipeClient = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    switch (action) {
      case 'list': {
        // Every page, however the deployment pages; filtered here, from the
        // fields the list gives, so the filters work on any deployment.
        const list = await client.voices.listPages();
        if (!list.complete) note(io, `the voice list goes on past ${list.voices.length} voices in ${list.pages} pages; only those are shown`);
        const voices = list.voices
          .map((v) => v.raw)
          .filter((v) => (type === undefined || v['type'] === type) && (values.model === undefined || (Array.isArray(v['models']) && v['models'].includes(values.model))));
        emit(io, values.json, { items: voices }, (v) => (v.items.length === 0 ? 'no voices' : table(v.items)));
        return ExitCode.ok;
      }
      case 'clone': {
        const cloned = await client.voices.clone(await cloneParams(rest[0]!, rest[1]!, values));
        if (values.json) io.stdout.write(`${JSON.stringify(cloned.raw)}\n`);
        else {
          io.stdout.write(`${cloned.voiceId}\n`);
          const r = cloned.raw;
          note(io, `cloned voice ${JSON.stringify(r['name'] ?? rest[0])}: ${r['gender'] ?? '?'}, ${r['basePitchHz'] ?? '?'} Hz, rate ${r['rate'] ?? '?'}, ${r['creditsCharged'] ?? '?'} credits`);
        }
        return ExitCode.ok;
      }
      default: {
        const deleted = await client.voices.delete(rest[0]!);
        if (values.json) io.stdout.write(`${JSON.stringify(deleted)}\n`);
        else note(io, `deleted voice ${rest[0]}`);
        return ExitCode.ok;
      }
    }
  } finally {
    await service.close();
  }
}

