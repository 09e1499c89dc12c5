/** `voxpipe CMD --help` and `voxpipe --version`: commander's help on stdout, exit 0, nothing started. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HELP_WIDTH, main, program } from '../../src/cli/main.js';
import { fakeIo } from '../helpers/fake-io.js';

const COMMANDS = ['say', 'speak', 'serve', 'jobs', 'voices', 'design', 'profile', 'usage', 'data', 'transcribe', 'image', 'video', 'lipsync', 'bench'];

describe('help and version', () => {
  it('every command is in the program, and nothing else but help', () => {
    expect(program(fakeIo({}), '0', () => undefined).commands.map((c) => c.name())).toEqual(COMMANDS);
  });

  it.each(COMMANDS)('%s --help prints its usage and exits 0', async (command) => {
    const io = fakeIo({});
    expect(await main([command, '--help'], io)).toBe(0);
    expect(io.out()).toMatch(new RegExp(`^Usage: voxpipe ${command}\\b`));
    expect(io.out()).toContain('--ephemeral'); // the global option, shown with every command
    expect(io.err()).toBe('');
  });

  it.each(COMMANDS)('%s --help shows examples of the command, in lines of at most 100 characters', async (command) => {
    const io = fakeIo({});
    await main([command, '--help'], io);
    const examples = io.out().split('\nExamples:\n')[1];
    expect(examples, 'an Examples section').toBeDefined();
    expect(examples!.split('\n').filter((l) => l.startsWith(`  voxpipe ${command}`) || l.includes(`| voxpipe ${command}`)).length).toBeGreaterThan(0);
    for (const line of io.out().split('\n')) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH);
    // The environment is said once, in `voxpipe --help`, not under every command.
    expect(io.out()).not.toContain('VOXPIPE_BASE_URL');
  });

  it('voxpipe --help: the environment, once, and examples, in lines of at most 100 characters', async () => {
    const io = fakeIo({});
    expect(await main(['--help'], io)).toBe(0);
    expect(io.out().match(/^Environment:$/gm)).toHaveLength(1);
    expect(io.out().match(/VOXPIPE_BASE_URL/g)).toHaveLength(1);
    expect(io.out()).toMatch(/\nExamples:\n {2}voxpipe say /);
    for (const line of io.out().split('\n')) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH);
  });

  it('say --help: --voice takes an id or a name; .ogg is Vorbis unless the service sends opus', async () => {
    const io = fakeIo({});
    await main(['say', '--help'], io);
    const text = io.out().replace(/\s+/g, ' ');
    expect(text).toContain('--voice <ID|NAME> a voice\'s id, or its name');
    expect(text).toMatch(/\.ogg \(Vorbis\).*\.ogg then holds Opus/);
  });

  it.each(COMMANDS)('%s --help lists every option it takes, each described with its default or meaning', async (command) => {
    const io = fakeIo({});
    await main([command, '--help'], io);
    const cmd = program(fakeIo({}), '0', () => undefined).commands.find((c) => c.name() === command)!;
    const visible = cmd.options.filter((o) => !o.hidden);
    expect(visible.length).toBeGreaterThan(0);
    for (const option of visible) {
      expect(io.out(), option.long).toContain(option.long);
      expect(option.description.length, `${command} ${option.long}`).toBeGreaterThan(5);
      // A value option names its default, or is mandatory (alone or as one of a pair), or belongs to the actions it names.
      const needsValue = option.required || option.optional;
      if (needsValue && !option.mandatory) {
        expect(option.defaultValue !== undefined || /default|one of .* is needed|^\w+(, \w+)*: /.test(option.description), `${command} ${option.long}: ${option.description}`).toBe(true);
      }
    }
  });

  it('no command: the usage on stderr, nothing on stdout, exit 2', async () => {
    const io = fakeIo({});
    expect(await main([], io)).toBe(2);
    expect(io.out()).toBe('');
    expect(io.err()).toMatch(/^voxpipe: error invalid_arguments: no command given\nUsage: voxpipe /);
  });

  it('an unknown command or option: one invalid_arguments line on stderr, exit 2', async () => {
    const unknown = fakeIo({});
    expect(await main(['sya', 'Hi.'], unknown)).toBe(2);
    expect(unknown.err()).toMatch(/^voxpipe: error invalid_arguments: unknown command 'sya' \(Did you mean say\?\)/);
    const option = fakeIo({});
    expect(await main(['say', 'Hi.', '--bogus'], option)).toBe(2);
    expect(option.err()).toBe("voxpipe: error invalid_arguments: unknown option '--bogus' (voxpipe say --help says what it takes)\n");
    const choice = fakeIo({});
    expect(await main(['say', 'Hi.', '--format', 'flac'], choice)).toBe(2);
    expect(choice.err()).toMatch(/^voxpipe: error invalid_arguments: option '-f, --format <F>' argument 'flac' is invalid\. Allowed choices are pcm, wav, mp3, opus\./);
    expect(option.out() + choice.out()).toBe('');
    const speak = fakeIo({});
    expect(await main(['speak', 'Hello'], speak)).toBe(2);
    expect(speak.err()).toMatch(/^voxpipe: error invalid_arguments: speak reads standard input; use `voxpipe say TEXT`/);
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const io = fakeIo({});
    expect(await main(['--version'], io)).toBe(0);
    expect(io.out()).toBe(`voxpipe ${version}\n`);
  });
});
