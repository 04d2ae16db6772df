import { describe, expect, it } from 'vitest';
import { restErrorOf } from './router.js';

describe('REST errors from GraphQL errors', () => {
  it('takes the status from the reason code in the extensions, whatever the message says', () => {
    const error = restErrorOf({ message: 'Variable "$id" got invalid value', extensions: { reasonCode: 'conflict', code: 'conflict', status: 409 } });
    expect({ reasonCode: error?.reasonCode, status: error?.status, message: error?.message }).toEqual({
      reasonCode: 'conflict',
      status: 409,
      message: 'Variable "$id" got invalid value',
    });
  });

  it('reads a reason code given only as extensions.code, and keeps the details', () => {
    const error = restErrorOf({ message: 'gone', extensions: { code: 'notFound', details: 'since yesterday' } });
    expect({ status: error?.status, details: error?.details }).toEqual({ status: 404, details: 'since yesterday' });
  });

  it("prefers the domain's reason code to a code the gateway added", () => {
    expect(restErrorOf({ message: 'locked', extensions: { reasonCode: 'accessDenied', code: 'DOWNSTREAM_SERVICE_ERROR' } })?.status).toBe(403);
  });

  it("maps GraphQL's BAD_USER_INPUT to a 400", () => {
    expect(restErrorOf({ message: 'Argument "limit" has invalid value', extensions: { code: 'BAD_USER_INPUT' } })?.reasonCode).toBe('illegalArguments');
  });

  it('does not guess from the message: an error without a known code is no known failure (a 500)', () => {
    expect(restErrorOf({ message: 'Variable "$input" got invalid value 5' })).toBeUndefined();
    expect(restErrorOf({ message: 'not found', extensions: { code: 'SOMETHING_ELSE' } })).toBeUndefined();
  });
});
