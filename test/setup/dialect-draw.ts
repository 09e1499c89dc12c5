/**
 * Drawn-dialect projects (vitest.config.ts): every failure message ends
 * with what the deployment drew and how to replay it, so a red run says
 * more than a seed.
 */
import { beforeEach } from 'vitest';
import { describeDialect } from '../../src/server/dialect.js';

const draw = describeDialect();

beforeEach(({ onTestFailed }) => {
  onTestFailed(({ task }) => {
    for (const error of task.result?.errors ?? []) error.message = `${error.message}\n  under ${draw}`;
  });
});
