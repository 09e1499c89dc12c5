import { describe, expect, expectTypeOf, it } from 'vitest';
import { defined } from '../src/defined.js';

describe('defined', () => {
  it('drops the undefined properties and keeps every other value, falsy ones included', () => {
    const out = defined({ a: 1, b: undefined, c: 0, d: '', e: null, f: false });
    expect(out).toEqual({ a: 1, c: 0, d: '', e: null, f: false });
    expect(Object.keys(out)).not.toContain('b');
  });

  it('types a maybe-undefined property as optional, so the result fits an exactOptionalPropertyTypes option', () => {
    const speed: number | undefined = undefined as number | undefined;
    const out = defined({ text: 'Hi.', speed });
    expectTypeOf(out).toEqualTypeOf<{ text: string } & { speed?: number }>();
    const options: { text: string; speed?: number } = out;
    expect(options).toEqual({ text: 'Hi.' });
  });
});
