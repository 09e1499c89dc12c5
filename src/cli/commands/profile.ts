/**
 * `voxpipe profile [--webhook-url URL] [--json]`: the account's profile
 * (user id, tier, credits, remaining API quota, webhook URL). With
 * `--webhook-url` it sets the task-completion webhook first; the response
 * then carries the webhook signing secret, which the service shows only
 * once: keep it to verify the `X-Voxpipe-Signature` of webhook calls.
 */
import { createClient } from '../../http/index.js';
import { jsonOption, Option, type CliCommand } from '../command.js';
import { ExitCode, note, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { emit, fields } from '../output.js';

interface Options {
  json?: boolean;
  webhookUrl?: string;
}

export const command: CliCommand<Options> = {
  name: 'profile',
  summary: "the account's profile; sets the task webhook with --webhook-url",
  examples: [
    "voxpipe profile",
    "voxpipe profile --webhook-url https://example.com/voxpipe-hook",
  ],
  declare(cmd) {
    cmd.addOption(new Option('--webhook-url <URL>', 'set the task webhook; default: only read the profile')).addOption(jsonOption());
  },
  run: (_args, values, io) => run(values, io),
};

async function run(values: Options, io: Io): Promise<number> {
  const service = await openServiceFor(io);
  try {
    const client = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    const webhookUrl = values.webhookUrl;
    const profile = webhookUrl === undefined ? await client.profile.get() : await client.profile.update({ webhookUrl });
    if (webhookUrl !== undefined && typeof profile.raw['webhookSecret'] === 'string') {
      note(io, 'webhook set; keep webhookSecret: it is shown only now (verify X-Voxpipe-Signature with it)');
    }
    emit(io, values.json, profile.raw, (raw) => fields(raw));
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}
