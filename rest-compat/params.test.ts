import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { bool, count, parse } from './params.js';

describe('count (limit, offset of GET C/jobs)', () => {
  const page = z.object({ limit: count.optional() });
  it('reads digits as a number', () => {
    expect(parse(page, { limit: '25' })).toEqual({ limit: 25 });
    expect(parse(page, {})).toEqual({});
  });
  it('refuses a repeated, negative, fractional or too long value with a 400 naming the parameter', () => {
    expect(() => parse(page, { limit: ['1', '2'] })).toThrow(/limit must be given once/);
    expect(() => parse(page, { limit: '-1' })).toThrow(/limit must be an integer from 0 to 999999999/);
    expect(() => parse(page, { limit: '1.5' })).toThrow(/integer from 0 to 999999999/);
    expect(() => parse(page, { limit: '1234567890' })).toThrow(/integer from 0 to 999999999/);
  });
});

describe('bool', () => {
  const flags = z.object({ recursive: bool.optional() });
  it("reads 'true' and 'false' in either case, and nothing else", () => {
    expect(parse(flags, { recursive: 'TRUE' })).toEqual({ recursive: true });
    expect(parse(flags, { recursive: 'False' })).toEqual({ recursive: false });
    expect(() => parse(flags, { recursive: 'yes' })).toThrow(/recursive must be 'true' or 'false'/);
  });
});
