/** Find a program on PATH without running it. */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Absolute path of `command` on `PATH` (read at call time), or undefined.
 * On Windows the `PATHEXT` extensions are tried too.
 */
export function findOnPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? '').split(delimiter).filter((dir) => dir.length > 0);
  const extensions = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  for (const dir of dirs) {
    for (const extension of extensions) {
      const candidate = join(dir, command + extension);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here; keep looking
      }
    }
  }
  return undefined;
}
