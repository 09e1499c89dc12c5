import { describe, expect, it } from 'vitest';
import { signUrl, verifySignedUrl } from '../../../../src/server/rest/common/signed-url.js';
import { testContext } from './context.js';

describe('signed URLs', () => {
  it('verify for their path and query until they expire', () => {
    const t = testContext();
    const url = new URL(signUrl(t.ctx, '/files/aud_1', { download: '1' }, 1000));
    expect(url.origin).toBe('http://test');
    expect(verifySignedUrl(t.ctx, url)).toBe(true);
    t.advance(1001);
    expect(verifySignedUrl(t.ctx, url)).toBe(false);
  });

  it('refuse a changed path, parameter, expiry or signature, and another server secret', () => {
    const t = testContext();
    const url = signUrl(t.ctx, '/files/aud_1', { download: '1' });
    const changed = [
      url.replace('/files/aud_1', '/files/aud_2'),
      url.replace('download=1', 'download=0'),
      url.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 1}`),
      url.replace(/sig=[^&]+/, 'sig=x'),
      url.replace(/&?sig=[^&]+/, ''),
    ];
    for (const u of changed) expect(verifySignedUrl(t.ctx, new URL(u)), u).toBe(false);
    expect(verifySignedUrl(testContext().ctx, new URL(url))).toBe(false);
  });
});
