import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { bool, limit, offset, parse } from './params.js';

describe('limit, offset (GET C/jobs)', () => {
  const page = z.object({ limit: limit.optional(), offset: offset.optional() });
  it('reads digits as a number', () => {
    expect(parse(page, { limit: '25', offset: '5' })).toEqual({ limit: 25, offset: 5 });
    expect(parse(page, {})).toEqual({});
  });
  it('refuses a repeated, negative, fractional or too long value with a 400 naming the parameter, as the searches say it', () => {
    expect(() => parse(page, { limit: ['1', '2'] })).toThrow(/limit must be given once/);
    for (const bad of ['-1', '1.5', 'abc', '1234567890']) expect(() => parse(page, { limit: bad }), bad).toThrow(/limit must be an integer from 0 to 1000/);
    expect(() => parse(page, { offset: '-1' })).toThrow(/offset must be a non-negative integer/);
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
