import { describe, expect, it } from 'vitest';
import { JOB_SEGMENT_MAX_CHARS, splitJobText, textPreviewOf } from '../../../../src/server/rest/tts/job-runner.js';
import { countChars } from '../../../../src/protocol/limits.js';

describe('job text helpers', () => {
  it('splits at sentence ends followed by space; joining gives the text back', () => {
    const text = 'One. Two!  Three? Four。五 six...   seven';
    const parts = splitJobText(text);
    expect(parts).toEqual(['One. ', 'Two!  ', 'Three? ', 'Four。五 six...   ', 'seven']);
    expect(parts.join('')).toBe(text);
    expect(splitJobText('No end')).toEqual(['No end']);
    expect(splitJobText('Ends. ')).toEqual(['Ends. ']);
  });

  it('cuts sentences longer than the segment maximum, never inside a surrogate pair', () => {
    const text = '😀'.repeat(JOB_SEGMENT_MAX_CHARS + 3);
    const parts = splitJobText(text);
    expect(parts.map(countChars)).toEqual([JOB_SEGMENT_MAX_CHARS, 3]);
    expect(parts.join('')).toBe(text);
  });

  it('previews at most 80 code points', () => {
    expect(textPreviewOf('short')).toBe('short');
    const preview = textPreviewOf('😀'.repeat(100));
    expect(countChars(preview)).toBe(80);
    expect(preview).toBe('😀'.repeat(80));
  });
});
