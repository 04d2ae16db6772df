import { describe, expect, it } from 'vitest';
import { notFound, reasonOfStatus } from './errors.js';

describe('reasonOfStatus', () => {
  it('names the reason code of a status the service answers, the client\'s fault for other 4xx and 501, internal otherwise', () => {
    expect([400, 401, 403, 404, 409, 412, 413, 415, 416, 429, 503].map(reasonOfStatus)).toEqual([
      'illegalArguments',
      'notAuthenticated',
      'accessDenied',
      'notFound',
      'conflict',
      'preconditionFailed',
      'tooLarge',
      'unsupportedMediaType',
      'rangeNotSatisfiable',
      'tooManyRequests',
      'unavailable',
    ]);
    expect([405, 411, 501].map(reasonOfStatus)).toEqual(['illegalArguments', 'illegalArguments', 'illegalArguments']);
    expect([500, 502].map(reasonOfStatus)).toEqual(['internal', 'internal']);
  });
});

describe('ServiceError', () => {
  it('cuts a message that quotes a huge input', () => {
    const message = notFound(`content '${'x'.repeat(5_000)}' not found`).message;
    expect(message.length).toBeLessThan(2_100);
    expect(message).toMatch(/… \(message cut at 2000 characters\)$/);
    expect(notFound('short').message).toBe('short');
  });
});
