/**
 * `voxpipe usage [--limit N] [--json]`: balance, API usage
 * (`apiUsage.totalCreditsCharged`, ...) and the most recent ledger entries.
 */
import { parseArgs } from 'node:util';
import { createClient } from '../../http/index.js';
import { numberOption, usage, UsageError } from '../args.js';
import { ExitCode, type Io } from '../io.js';
import { openService } from '../service.js';

export const USAGE = 'voxpipe usage [--limit N] [--json]';

const OPTIONS = {
  json: { type: 'boolean' },
  limit: { type: 'string' },
} as const;

export async function run(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = usage(() => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }));
  if (positionals.length > 0) throw new UsageError(`usage takes no arguments (got ${JSON.stringify(positionals[0])})`);
  const limit = numberOption(values.limit, 'limit', 1, 100);
  const service = await openService(io);
  try {
    const client = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    const summary = await client.usage.get({ query: { limit } });
    io.stdout.write(`${values.json ? JSON.stringify(summary.raw) : JSON.stringify(summary.raw, null, 2)}\n`);
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}
