/**
 * The voxpipe command line. `main` returns an exit code; only bin/voxpipe.js
 * calls process.exit.
 */
import { VoxpipeError } from '../errors.js';
import { UsageError } from './args.js';
import { errorLine, ExitCode, processIo, type Io } from './io.js';
import { jobs, JOBS_USAGE } from './jobs.js';
import { say, SAY_USAGE, speak, SPEAK_USAGE } from './say.js';
import { serve, SERVE_USAGE } from './serve.js';

type Command = (argv: string[], io: Io) => Promise<number>;

const COMMANDS: Record<string, { run: Command; usage: string }> = {
  say: { run: say, usage: SAY_USAGE },
  speak: { run: speak, usage: SPEAK_USAGE },
  serve: { run: serve, usage: SERVE_USAGE },
  jobs: { run: jobs, usage: JOBS_USAGE },
};

function usage(): string {
  return ['usage:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${usage()}\n`);
    return name === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (name === '--version') {
    io.stdout.write('voxpipe 0.1.0\n');
    return ExitCode.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`voxpipe: error invalid_arguments: unknown command ${JSON.stringify(name)}\n${usage()}\n`);
    return ExitCode.usage;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    io.stderr.write(`${errorLine(err)}\n`);
    if (err instanceof UsageError) return ExitCode.usage;
    return err instanceof VoxpipeError ? ExitCode.error : ExitCode.internal;
  }
}
