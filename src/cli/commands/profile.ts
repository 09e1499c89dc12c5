/**
 * `voxpipe profile [--webhook-url URL] [--json]`: the account's profile
 * (user id, tier, credits, remaining API quota, webhook URL). With
 * `--webhook-url` it sets the task-completion webhook first; the response
 * then carries the webhook signing secret, which the service shows only
 * once: keep it to verify the `X-Voxpipe-Signature` of webhook calls.
 */
import { parseArgs } from 'node:util';
import { createClient } from '../../http/index.js';
import { usage, UsageError } from '../args.js';
import { ExitCode, note, type Io } from '../io.js';
import { openService } from '../service.js';

export const USAGE = 'voxpipe profile [--webhook-url URL] [--json]';

const OPTIONS = {
  json: { type: 'boolean' },
  'webhook-url': { type: 'string' },
} as const;

export async function run(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  if (positionals.length > 0) throw new UsageError(`profile takes no arguments (got ${JSON.stringify(positionals[0])})`);
  const service = await openService(io);
  try {
    const client = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    const webhookUrl = values['webhook-url'];
    const profile = webhookUrl === undefined ? await client.profile.get() : await client.profile.update({ webhookUrl });
    if (webhookUrl !== undefined && typeof profile.raw['webhookSecret'] === 'string') {
      note(io, 'webhook set; keep webhookSecret: it is shown only now (verify X-Voxpipe-Signature with it)');
    }
    io.stdout.write(`${values.json ? JSON.stringify(profile.raw) : JSON.stringify(profile.raw, null, 2)}\n`);
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}
