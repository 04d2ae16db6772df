import { describe, expect, it } from 'vitest';
import { reasonOfStatus } from './errors.js';

describe('reasonOfStatus', () => {
  it('names the reason code of a status the service answers, the client\'s fault for other 4xx and 501, internal otherwise', () => {
    expect([400, 401, 403, 404, 409, 413, 415, 416, 429, 503].map(reasonOfStatus)).toEqual([
      'illegalArguments',
      'notAuthenticated',
      'accessDenied',
      'notFound',
      'conflict',
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
