/**
 * `voxpipe design create PROMPT [--preview-text T] [--provider ID]... [--idempotency-key K] [--json]`,
 * `voxpipe design preview DESIGN_ID CANDIDATE_ID --out FILE|- [--format wav|mp3]`,
 * `voxpipe design save DESIGN_ID CANDIDATE_ID --name N [--idempotency-key K] [--json]`.
 *
 * Designs live on the service until they expire, so preview and save need
 * the same service as create: a deployment (VOXPIPE_BASE_URL), or the
 * embedded default, which keeps its designs in its data directory (not with
 * `--ephemeral`). Resending `create` or `save` with the same
 * `--idempotency-key` replays the first result without a second charge.
 */
import { createClient, type VoxpipeClient } from '../../http/index.js';
import { UsageError } from '../args.js';
import { jsonOption, Option, type CliCommand } from '../command.js';
import { ExitCode, note, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { writeAudioOut } from '../audio-out.js';
import { checkOutPath } from '../out-path.js';
import { defined } from '../../defined.js';
import { emit, table } from '../output.js';


/** Spoken by the previews when --preview-text is not given. */
export const DEFAULT_PREVIEW_TEXT = 'Hello! This is a preview of the voice you designed.';

interface Options {
  json?: boolean;
  previewText?: string;
  provider?: string[];
  idempotencyKey?: string;
  out?: string;
  format?: 'wav' | 'mp3';
  name?: string;
}

export const command: CliCommand<Options> = {
  name: 'design',
  summary: 'design a voice from a description: create, preview, save',
  examples: [
    "voxpipe design create 'a calm, low voice for bedtime stories'",
    "voxpipe design preview DESIGN_ID CANDIDATE_ID --out preview.wav",
    "voxpipe design save DESIGN_ID CANDIDATE_ID --name Calm",
  ],
  declare(cmd) {
    cmd
      .usage('create PROMPT | preview ID CANDIDATE --out FILE | save ID CANDIDATE --name N')
      .argument('<ACTION>', "create PROMPT: voice candidates from a description; preview DESIGN_ID CANDIDATE_ID: a candidate's preview; save DESIGN_ID CANDIDATE_ID: keep a candidate as a personal voice")
      .argument('[ARGS...]', "the action's arguments")
      .addOption(new Option('--preview-text <T>', `create: what the previews say; default ${JSON.stringify(DEFAULT_PREVIEW_TEXT)}`))
      .addOption(new Option('--provider <ID>', "create: repeatable; default the service's").argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]))
      .addOption(new Option('--idempotency-key <K>', 'create, save: resending with the same key replays the first result; default none'))
      .addOption(new Option('-o, --out <FILE|->', 'preview: where the audio goes (converted to what the extension says)'))
      .addOption(new Option('--format <F>', 'preview: default from the --out extension, else wav').choices(['wav', 'mp3']))
      .addOption(new Option('--name <N>', 'save: the voice\'s name'))
      .addOption(jsonOption());
  },
  run,
};

function withoutPreviewUrls(raw: Record<string, unknown>): Record<string, unknown> {
  const candidates = Array.isArray(raw['candidates']) ? (raw['candidates'] as Record<string, unknown>[]) : undefined;
  if (!candidates) return raw;
  return { ...raw, candidates: candidates.map(({ previewAudioUrl: _url, preview_audio_url: _url2, ...c }) => c) };
}

/** A design in a few lines: its id, a row per candidate, and the commands that preview and save one. */
function humanDesign(d: Record<string, unknown>): string {
  const id = String(d['designId'] ?? d['design_id'] ?? d['id'] ?? '?');
  const candidates = Array.isArray(d['candidates']) ? (d['candidates'] as Record<string, unknown>[]) : [];
  const rows = candidates.map((c) => {
    const p = (c['parameters'] ?? {}) as Record<string, unknown>;
    return [c['candidateId'] ?? c['candidate_id'] ?? c['id'], p['gender'], p['basePitchHz'] === undefined ? undefined : `${String(p['basePitchHz'])} Hz`, p['rate'], p['language'], p['provider'], p['engineModelId']];
  });
  const expires = d['expiresAt'] ?? d['expires_at'];
  return [
    `design ${id}${expires ? ` (until ${String(expires)})` : ''}: ${candidates.length} candidates`,
    table(rows, ['CANDIDATE', 'GENDER', 'PITCH', 'RATE', 'LANGUAGE', 'PROVIDER', 'MODEL']),
    `listen: voxpipe design preview ${id} CANDIDATE --out preview.wav`,
    `keep:   voxpipe design save ${id} CANDIDATE --name NAME`,
  ].join('\n');
}

function formatOf(format: 'wav' | 'mp3' | undefined, out: string): 'wav' | 'mp3' {
  return format ?? (out.toLowerCase().endsWith('.mp3') ? 'mp3' : 'wav');
}

async function run(positionals: string[], values: Options, io: Io): Promise<number> {
  const [action, ...rest] = positionals;
  if (action === 'create' && rest.join(' ').trim() === '') throw new UsageError('design create needs PROMPT');
  if ((action === 'preview' || action === 'save') && rest.length !== 2) throw new UsageError(`design ${action} needs DESIGN_ID and CANDIDATE_ID`);
  if (action === 'preview' && !values.out) throw new UsageError('design preview needs --out FILE (or - for standard output)');
  // Before any request: no credits spent on a file that cannot be written.
  if (action === 'preview' && values.out !== '-') await checkOutPath(values.out!);
  if (action === 'save' && !values.name) throw new UsageError('design save needs --name N');
  if (!['create', 'preview', 'save'].includes(action ?? '')) throw new UsageError(`design needs one of create, preview, save (got ${JSON.stringify(action ?? '')})`);
  const service = await openServiceFor(io);
  try {
    const client: VoxpipeClient = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    if (action === 'create') {
      const design = await client.voiceDesigns.create({
        prompt: rest.join(' '),
        previewText: values.previewText ?? DEFAULT_PREVIEW_TEXT,
        ...defined({ providers: values.provider, idempotencyKey: values.idempotencyKey }),
      });
      if (service.embedded && service.dataDir === undefined) note(io, 'this design lives in this invocation\'s in-memory server only (--ephemeral); without it, or with VOXPIPE_BASE_URL, you can preview and save it later');
      // The embedded server is gone when this command ends: its preview URLs would point nowhere.
      const raw = service.embedded ? withoutPreviewUrls(design.raw) : design.raw;
      emit(io, values.json, { ...raw, idempotencyKey: design.idempotencyKey }, humanDesign);
      return ExitCode.ok;
    }
    const [designId, candidateId] = rest as [string, string];
    if (action === 'preview') {
      const out = values.out!;
      const format = formatOf(values.format, out);
      const path = `/voice-designs/${encodeURIComponent(designId)}/candidates/${encodeURIComponent(candidateId)}/audio`;
      const file = format === 'wav' ? await client.voiceDesigns.preview(designId, candidateId) : await client.http.binary({ path, query: { format } });
      // The file holds what its name says (e.g. `--out p.flac`: the preview's WAV through ffmpeg).
      await writeAudioOut(out, file, io, "the preview's");
      return ExitCode.ok;
    }
    const saved = await client.voiceDesigns.save(designId, {
      candidateId,
      name: values.name!,
      ...defined({ idempotencyKey: values.idempotencyKey }),
    });
    if (values.json) emit(io, true, { ...saved.raw, idempotencyKey: saved.idempotencyKey }, () => '');
    else {
      io.stdout.write(`${saved.voiceId}\n`);
      note(io, `saved candidate ${candidateId} as voice ${saved.voiceId}`);
    }
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}
