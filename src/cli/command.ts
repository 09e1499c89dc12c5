/**
 * The CLI's commands on `commander`: each command module declares its
 * arguments and options once, with the help and default of each, and gets
 * them parsed; `main.ts` puts the commands in one program. Parsing errors
 * become `invalid_arguments` (exit 2) through the same failure line as every
 * other error; `--help` and `--version` print on standard output, exit 0.
 */
import { Option, type Command } from 'commander';
import type { Io } from './io.js';

export { Option, type Command };

/** One subcommand: what it takes (declared on a commander Command) and what it does with it. */
export interface CliCommand<O = Record<string, unknown>> {
  name: string;
  /** One line in `voxpipe --help`. */
  summary: string;
  /** Command lines shown under `Examples:` in its `--help` (each at most about 90 characters). */
  examples: readonly string[];
  /** Adds the command's arguments and options, each with its help and default. */
  declare(cmd: Command): void;
  /** The command's work: its operands, its options as commander gives them (camelCase keys), the process's streams. */
  run(args: string[], options: O, io: Io): Promise<number>;
}

/** `--json`: the command's data as JSON on standard output. */
export const jsonOption = (): Option => new Option('--json', 'JSON on standard output');

/** `--interval-ms`: how often a task is polled; for tests and impatient people, left out of the help. */
export const intervalOption = (): Option => new Option('--interval-ms <MS>', 'poll interval').hideHelp();

/** `--out FILE|-` of the media commands: where the result goes. */
export const mediaOutOption = (extension: string): Option =>
  new Option('-o, --out <FILE|->', `a ${extension} file, or - for standard output; default <task id>${extension} in the current folder`);
