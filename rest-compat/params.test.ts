import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { count, parse } from './params.js';

describe('count (limit, offset of GET C/jobs)', () => {
  const page = z.object({ limit: count.optional() });
  it('reads digits as a number', () => {
    expect(parse(page, { limit: '25' })).toEqual({ limit: 25 });
    expect(parse(page, {})).toEqual({});
  });
  it('refuses a repeated, negative, fractional or too long value with a 400 naming the parameter', () => {
    expect(() => parse(page, { limit: ['1', '2'] })).toThrow(/limit must be given once/);
    expect(() => parse(page, { limit: '-1' })).toThrow(/limit must be a non-negative integer/);
    expect(() => parse(page, { limit: '1.5' })).toThrow(/non-negative integer/);
    expect(() => parse(page, { limit: '1234567890' })).toThrow(/non-negative integer/);
  });
});
