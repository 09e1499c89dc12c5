import { describe, expect, it } from 'vitest';
import { ReliableSession } from '../../src/realtime/reliable/session.js';
import { SimpleSession } from '../../src/realtime/simple-session.js';
import { createRealtimeTransport } from '../../src/realtime/transport.js';
import { REQUEST } from './fixtures.js';

const base = { wsUrl: 'ws://127.0.0.1:1', apiKey: 'sk-test-factory', request: REQUEST };

describe('createRealtimeTransport', () => {
  it('is reliable by default, with the given request id', () => {
    const t = createRealtimeTransport({ ...base, rtHttpUrl: 'http://127.0.0.1:1', requestId: 'req-factory' });
    expect(t).toBeInstanceOf(ReliableSession);
    expect((t as ReliableSession).requestId).toBe('req-factory');
    expect(t.name).toBe('realtime');
  });

  it('gives a simple session for mode simple', () => {
    expect(createRealtimeTransport({ ...base, mode: 'simple' })).toBeInstanceOf(SimpleSession);
  });

  it('makes a new random request id per reliable session (one per user generation)', () => {
    const a = createRealtimeTransport({ ...base, rtHttpUrl: 'http://127.0.0.1:1' }) as ReliableSession;
    const b = createRealtimeTransport({ ...base, rtHttpUrl: 'http://127.0.0.1:1' }) as ReliableSession;
    expect(a.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.requestId).not.toBe(b.requestId);
  });
});
