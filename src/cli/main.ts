/**
 * The voxpipe command line. `main` returns an exit code; only bin/voxpipe.js
 * calls process.exit.
 */
import { UsageError } from './args.js';
import { classifyFailure, errorLine, ExitCode, processIo, type Io } from './io.js';
import { bench, BENCH_USAGE } from './bench.js';
import * as design from './commands/design.js';
import * as image from './commands/image.js';
import * as lipsync from './commands/lipsync.js';
import * as transcribe from './commands/transcribe.js';
import * as video from './commands/video.js';
import * as profile from './commands/profile.js';
import * as usageCommand from './commands/usage.js';
import * as voices from './commands/voices.js';
import { jobs, JOBS_USAGE } from './jobs.js';
import { say, SAY_USAGE, speak, SPEAK_USAGE } from './say.js';
import { serve, SERVE_USAGE } from './serve.js';
import { commandHelp } from './help.js';
import { EPHEMERAL_ENV } from './service.js';

type Command = (argv: string[], io: Io) => Promise<number>;

const COMMANDS: Record<string, { run: Command; usage: string }> = {
  say: { run: say, usage: SAY_USAGE },
  speak: { run: speak, usage: SPEAK_USAGE },
  serve: { run: serve, usage: SERVE_USAGE },
  jobs: { run: jobs, usage: JOBS_USAGE },
  voices: { run: voices.run, usage: voices.USAGE },
  design: { run: design.run, usage: design.USAGE },
  profile: { run: profile.run, usage: profile.USAGE },
  usage: { run: usageCommand.run, usage: usageCommand.USAGE },
  transcribe: { run: transcribe.run, usage: transcribe.USAGE },
  image: { run: image.run, usage: image.USAGE },
  video: { run: video.run, usage: video.USAGE },
  lipsync: { run: lipsync.run, usage: lipsync.USAGE },
  bench: { run: bench, usage: BENCH_USAGE },
};

/** Said once, after the commands: applies to all of them but `serve` (in memory unless `--data DIR`) and `bench` (always in memory). */
const GLOBAL_OPTIONS = [
  'global options:',
  '  --ephemeral   with no service configured, the embedded server keeps nothing between commands (env VOXPIPE_EPHEMERAL=1);',
  '                by default it keeps voices, jobs, designs and usage in VOXPIPE_DATA_DIR, else $XDG_DATA_HOME/voxpipe, else ~/.local/share/voxpipe',
].join('\n');

function usage(): string {
  return ['usage:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`), GLOBAL_OPTIONS].join('\n');
}

/** `--ephemeral` taken out of the arguments (not after `--`, where everything is text). */
function takeEphemeral(argv: string[]): { args: string[]; ephemeral: boolean } {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  if (!options.includes('--ephemeral')) return { args: argv, ephemeral: false };
  return { args: [...options.filter((a) => a !== '--ephemeral'), ...(end === -1 ? [] : argv.slice(end))], ephemeral: true };
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // A mistake, not a request for help: the usage goes where errors go (stdout carries only data).
    io.stderr.write(`voxpipe: error invalid_arguments: no command given\n${usage()}\n`);
    return ExitCode.usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${usage()}\n`);
    return ExitCode.ok;
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`voxpipe ${await packageVersion()}\n`);
    return ExitCode.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`voxpipe: error invalid_arguments: unknown command ${JSON.stringify(name)}\n${usage()}\n`);
    return ExitCode.usage;
  }
  // `voxpipe CMD --help`: the command's usage on stdout, exit 0 (before any option is checked or anything starts).
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`${commandHelp(name, command.usage)}\n`);
    return ExitCode.ok;
  }
  // `--ephemeral` is a global option of every command that may start the embedded server.
  const { args, ephemeral } = takeEphemeral(rest);
  const commandIo = ephemeral && name !== 'serve' ? { ...io, env: { ...io.env, [EPHEMERAL_ENV]: '1' } } : io;
  try {
    return await command.run(name === 'serve' ? rest : args, commandIo);
  } catch (err) {
    io.stderr.write(`${errorLine(err)}\n`);
    return classifyFailure(err, err instanceof UsageError ? ExitCode.usage : undefined).exit;
  }
}

/** The version in package.json (dist/cli/main.js and src/cli/main.ts are both two levels below it). */
async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}
