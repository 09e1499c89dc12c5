/**
 * The task-state words are defined once (protocol/task-states.ts) for the
 * server that writes them and the client that reads them: every word of
 * every family maps to the client's status, and the spec's terminal words
 * (3.1 to 3.4) stop a poller while the others do not.
 */
import { describe, expect, it } from 'vitest';
import { isTerminal, normalizeStatus, TaskStatus } from '../../src/http/task.js';
import { EnvelopeStatus, FlatStatus, MediaJobStatus, MinimalStatus } from '../../src/protocol/task-states.js';

const TERMINAL_WORDS = new Set<string>([EnvelopeStatus.success, EnvelopeStatus.partialFail, EnvelopeStatus.fail, FlatStatus.succeeded, FlatStatus.failed, MediaJobStatus.completed, MediaJobStatus.failed]);

describe('task states: one vocabulary for server and client', () => {
  const words = [...new Set([...Object.values(EnvelopeStatus), ...Object.values(FlatStatus), ...Object.values(MediaJobStatus), ...Object.values(MinimalStatus)])];

  it.each(words)('%s is read as a status of its own meaning', (word) => {
    const status = normalizeStatus(word);
    expect(Object.values(TaskStatus)).toContain(status);
    expect(isTerminal(status), word).toBe(TERMINAL_WORDS.has(word));
  });

  it('partial_fail is a result, fail and failed are failures', () => {
    expect(normalizeStatus(EnvelopeStatus.partialFail)).toBe(TaskStatus.partialFailed);
    expect(normalizeStatus(EnvelopeStatus.fail)).toBe(TaskStatus.failed);
    expect(normalizeStatus(MediaJobStatus.completed)).toBe(TaskStatus.succeeded);
  });
});
