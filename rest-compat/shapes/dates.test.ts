import { describe, expect, it } from 'vitest';
import { restDate } from './dates.js';

describe('restDate (spec "Dates": yyyy-MM-ddTHH:mm:ss.SSS+0000)', () => {
  it('writes the same date whether it comes as GraphQL writes it, as another ISO form or as a Date', () => {
    const date = new Date(Date.UTC(2026, 10, 22, 23, 5, 7, 89));
    expect(restDate('2026-11-22T23:05:07.089Z')).toBe('2026-11-22T23:05:07.089+0000');
    expect(restDate(date)).toBe('2026-11-22T23:05:07.089+0000');
    expect(restDate('2026-11-23T01:05:07.089+02:00')).toBe('2026-11-22T23:05:07.089+0000');
    expect(restDate('2026-11-22T23:05:07Z')).toBe('2026-11-22T23:05:07.000+0000');
    expect(restDate(null)).toBeUndefined();
  });
});
