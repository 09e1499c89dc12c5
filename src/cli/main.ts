/**
 * The voxpipe command line, on `commander`. `main` returns an exit code;
 * only bin/voxpipe.js calls process.exit.
 */
import { readFile } from 'node:fs/promises';
import { Command, CommanderError, Option } from 'commander';
import { UsageError } from './args.js';
import { command as bench } from './bench.js';
import type { CliCommand } from './command.js';
import { command as data } from './data.js';
import * as design from './commands/design.js';
import * as image from './commands/image.js';
import * as lipsync from './commands/lipsync.js';
import * as profile from './commands/profile.js';
import * as transcribe from './commands/transcribe.js';
import * as usage from './commands/usage.js';
import * as video from './commands/video.js';
import * as voices from './commands/voices.js';
import { classifyFailure, errorLine, ExitCode, processIo, type Io } from './io.js';
import { command as jobs } from './jobs.js';
import { sayCommand, speakCommand } from './say.js';
import { command as serve } from './serve.js';
import { EPHEMERAL_ENV } from './service.js';
import { checkDataDirEnv } from './data-dir.js';
import { explainMissingDeployment } from './deployment.js';

/** In the order `voxpipe --help` lists them. */
const COMMANDS: readonly CliCommand<never>[] = [
  sayCommand,
  speakCommand,
  serve,
  jobs,
  voices.command,
  design.command,
  profile.command,
  usage.command,
  data,
  transcribe.command,
  image.command,
  video.command,
  lipsync.command,
  bench,
];

/** Shown once, under `voxpipe --help` (every subcommand's help points to it). */
const ENVIRONMENT = [
  '',
  'Environment:',
  '  VOXPIPE_BASE_URL, VOXPIPE_API_KEY  a deployment; unset: the embedded reference server',
  '  VOXPIPE_ROOT_URL, VOXPIPE_WS_URL, VOXPIPE_RT_HTTP_URL',
  '                                     its other addresses, when not derived from the base URL',
  "  VOXPIPE_DATA_DIR, VOXPIPE_EPHEMERAL  the embedded server's state (see --ephemeral)",
  '  VOXPIPE_DAEMON_IDLE                idle time before its local service stops (default 10m)',
  '  VOXPIPE_DATA_RETENTION             how long it keeps audio and finished requests (default 24h)',
  '  VOXPIPE_DAEMON=0                   no local service: each command runs the server itself',
  '  VOXPIPE_DATABASE_URL               serve: a PostgreSQL store',
  '  VOXPIPE_DEBUG                      stack traces of internal errors',
  '',
  'Examples:',
  "  voxpipe say 'Hello, world.'",
  '  voxpipe say --out story.wav < story.txt',
  '  voxpipe serve --port 0 --demo',
  '',
  'voxpipe COMMAND --help shows what a command takes, with examples.',
].join('\n');

/** The longest help line, in characters (a terminal of 100 columns shows it whole). */
export const HELP_WIDTH = 100;

/**
 * Applies to every command that may start the embedded server. `serve` is
 * in memory unless --data or --database, and `bench` always is.
 */
const EPHEMERAL = new Option(
  '--ephemeral',
  `with no service configured, the embedded server keeps nothing between commands (or ${EPHEMERAL_ENV}=1); by default it keeps voices, jobs, designs and usage in VOXPIPE_DATA_DIR, else $XDG_DATA_HOME/voxpipe, else ~/.local/share/voxpipe`,
);

/** The program: one subcommand per CliCommand; `exit` receives the exit code of the one that ran. */
export function program(io: Io, version: string, exit: (code: number) => void): Command {
  const root = new Command('voxpipe')
    .description('text to live speech: the voxpipe client, its reference server and its benchmark')
    .version(`voxpipe ${version}`, '-V, --version', 'the version of voxpipe')
    .helpOption('-h, --help', 'what the command takes')
    .addOption(EPHEMERAL)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // The terminal's width, up to HELP_WIDTH (also off a terminal).
      getOutHelpWidth: () => Math.min((io.stdout as { columns?: number }).columns ?? HELP_WIDTH, HELP_WIDTH),
      getErrHelpWidth: () => Math.min((io.stderr as { columns?: number }).columns ?? HELP_WIDTH, HELP_WIDTH),
      // Parsing errors are thrown (exitOverride) and printed by `main` as the CLI's one error line.
      outputError: () => undefined,
    })
    .exitOverride()
    .showSuggestionAfterError()
    .addHelpText('after', ENVIRONMENT);
  for (const spec of COMMANDS as readonly CliCommand[]) {
    const cmd = root.command(spec.name).summary(spec.summary).description(spec.summary);
    spec.declare(cmd);
    cmd.addHelpText('after', `\nExamples:\n${spec.examples.map((e) => `  ${e}`).join('\n')}\n\nThe environment variables: voxpipe --help.`);
    cmd.action(async function (this: Command) {
      const options = this.optsWithGlobals<Record<string, unknown> & { ephemeral?: boolean }>();
      const commandIo = options.ephemeral && spec.name !== 'serve' ? { ...io, env: { ...io.env, [EPHEMERAL_ENV]: '1' } } : io;
      // The embedded default's data directory, before anything opens it (serve checks its own --data; bench is in memory).
      if (spec.name !== 'serve' && spec.name !== 'bench') await checkDataDirEnv(commandIo.env, EPHEMERAL_ENV);
      exit(await spec.run(this.args, options, commandIo));
    });
  }
  return root;
}

export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  let code: number = ExitCode.ok;
  const root = program(io, await packageVersion(), (c) => (code = c));
  if (argv.length === 0) {
    // A mistake, not a request for help: the usage goes where errors go (stdout carries only data).
    io.stderr.write(`voxpipe: error invalid_arguments: no command given\n${root.helpInformation()}`);
    return ExitCode.usage;
  }
  try {
    await root.parseAsync(argv, { from: 'user' });
    return code;
  } catch (thrown) {
    let err = await explainMissingDeployment(thrown, io.env);
    if (err instanceof CommanderError) {
      // --help, --version: printed on standard output already.
      if (err.exitCode === 0) return ExitCode.ok;
      err = new UsageError(`${err.message.replace(/^error: /, '').replace(/\n/g, ' ')} (voxpipe ${commandOf(argv) ?? ''}--help says what it takes)`);
    }
    io.stderr.write(`${errorLine(err)}\n`);
    return classifyFailure(err, err instanceof UsageError ? ExitCode.usage : undefined).exit;
  }
}

/** The subcommand named in the arguments, with a trailing space, for the error's hint. */
function commandOf(argv: string[]): string | undefined {
  const name = argv.find((a) => !a.startsWith('-'));
  return name !== undefined && COMMANDS.some((c) => c.name === name) ? `${name} ` : undefined;
}

/** The version in package.json (dist/cli/main.js and src/cli/main.ts are both two levels below it). */
async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}
