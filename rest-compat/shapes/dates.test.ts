import { describe, expect, it } from 'vitest';
import { parseRestDate, restDate } from './dates.js';

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

describe('parseRestDate (a date of a request, spec "Dates")', () => {
  it('reads the form with any numeric offset', () => {
    expect(parseRestDate('2026-11-22T23:05:07.089+0000')).toEqual(new Date('2026-11-22T23:05:07.089Z'));
    expect(parseRestDate('2026-11-23T01:35:07.089+0230')).toEqual(new Date('2026-11-22T23:05:07.089Z'));
    expect(parseRestDate('2026-11-22T20:05:07.089-0300')).toEqual(new Date('2026-11-22T23:05:07.089Z'));
  });

  it('refuses other forms and dates that do not exist', () => {
    for (const text of ['2026-11-22', '2026-11-22T23:05:07Z', '2026-11-22T23:05:07.089Z', '2026-02-31T00:00:00.000+0000', '2026-11-22T24:00:00.000+0000', '2026-11-22T23:05:07.089+2400', 'yesterday']) {
      expect({ text, date: parseRestDate(text) }).toEqual({ text, date: undefined });
    }
  });
});
