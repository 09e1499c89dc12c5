/**
 * `voxpipe usage [--limit N] [--json]`: balance, API usage
 * (`apiUsage.totalCreditsCharged`, ...) and the most recent ledger entries.
 */
import { createClient } from '../../http/index.js';
import { numberOption } from '../args.js';
import { jsonOption, Option, type CliCommand } from '../command.js';
import { ExitCode, type Io } from '../io.js';
import { openService } from '../service.js';

interface Options {
  json?: boolean;
  limit?: string;
}

export const command: CliCommand<Options> = {
  name: 'usage',
  summary: 'balance, API usage and recent ledger entries',
  declare(cmd) {
    cmd.addOption(new Option('--limit <N>', "1 to 100 recent entries; default the service's")).addOption(jsonOption());
  },
  run: (_args, values, io) => run(values, io),
};

async function run(values: Options, io: Io): Promise<number> {
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
