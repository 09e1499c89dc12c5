/** `voxpipe CMD --help` and `voxpipe --version` (issue 11): usage on stdout, exit 0, nothing started. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fakeIo } from '../helpers/fake-io.js';

const COMMANDS = ['say', 'speak', 'serve', 'jobs', 'voices', 'design', 'profile', 'usage', 'transcribe', 'image', 'video', 'lipsync', 'bench'];

describe('help and version', () => {
  it.each(COMMANDS)('%s --help prints its usage and exits 0', async (command) => {
    const io = fakeIo({});
    expect(await main([command, '--help'], io)).toBe(0);
    expect(io.out()).toMatch(new RegExp(`^usage: voxpipe ${command}\\b`));
    expect(io.err()).toBe('');
  });

  it.each(COMMANDS)('%s --help describes every option of its usage line, each with its default or meaning', async (command) => {
    const io = fakeIo({});
    await main([command, '--help'], io);
    const [usageLine, ...rest] = io.out().split('\n');
    const described = rest.join('\n');
    expect(described).toContain('options:');
    if (command === 'bench') return; // its usage line carries the defaults in parentheses
    const flags = new Set([...usageLine!.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]));
    const missing = [...flags].filter((flag) => !new RegExp(`^  [^\n]*${flag}\\b`, 'm').test(described));
    expect(missing).toEqual([]);
  });

  it('no command: the usage on stderr, nothing on stdout, exit 2', async () => {
    const io = fakeIo({});
    expect(await main([], io)).toBe(2);
    expect(io.out()).toBe('');
    expect(io.err()).toMatch(/^voxpipe: error invalid_arguments: no command given\nusage:/);
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const io = fakeIo({});
    expect(await main(['--version'], io)).toBe(0);
    expect(io.out()).toBe(`voxpipe ${version}\n`);
  });
});
