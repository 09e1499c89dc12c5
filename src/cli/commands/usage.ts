/**
 * `voxpipe usage [--limit N] [--json]`: balance, API usage
 * (`apiUsage.totalCreditsCharged`, ...) and the most recent ledger entries.
 */
import { createClient } from '../../http/index.js';
import { numberOption } from '../args.js';
import { jsonOption, Option, type CliCommand } from '../command.js';
import { ExitCode, type Io } from '../io.js';
import { openServiceFor } from '../service.js';
import { emit, fields, table } from '../output.js';

interface Options {
  json?: boolean;
  limit?: string;
}

export const command: CliCommand<Options> = {
  name: 'usage',
  summary: 'balance, API usage and recent ledger entries',
  examples: [
    "voxpipe usage",
    "voxpipe usage --limit 5 --json",
  ],
  declare(cmd) {
    cmd.addOption(new Option('--limit <N>', "1 to 100 recent entries; default the service's")).addOption(jsonOption());
  },
  run: (_args, values, io) => run(values, io),
};

async function run(values: Options, io: Io): Promise<number> {
  const limit = numberOption(values.limit, 'limit', 1, 100);
  const service = await openServiceFor(io);
  try {
    const client = createClient({ apiKey: service.config.apiKey, baseUrl: service.config.baseUrl, rootUrl: service.config.rootUrl });
    const summary = await client.usage.get({ query: { limit } });
    emit(io, values.json, summary.raw, (raw) => {
      const entries = Array.isArray(raw['ledger']) ? (raw['ledger'] as Record<string, unknown>[]) : [];
      const recent = entries.length === 0 ? 'no ledger entries yet' : `recent entries:\n${table(entries.map((e) => [e['createdAt'] ?? e['created_at'], e['amount'], e['currency'], e['state'], e['reason'] ?? e['description'] ?? e['refId']]), ['WHEN', 'AMOUNT', 'CURRENCY', 'STATE', 'WHAT'])}`;
      return `${fields(raw, ['pagination'])}\n${recent}`;
    });
    return ExitCode.ok;
  } finally {
    await service.close();
  }
}
