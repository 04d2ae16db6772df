import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.js';
import { graphqlErrorOf, toGraphQLError } from './errors.js';

describe('domain errors in GraphQL', () => {
  it('a ServiceError is a plain Error; as a GraphQL error its extensions carry code, reasonCode, status and details', () => {
    const error = new ServiceError('illegalArguments', 'name must not be empty', 'the field name');
    expect(error).not.toBeInstanceOf(GraphQLError);
    const mapped = toGraphQLError(error);
    expect(mapped.message).toBe('name must not be empty');
    expect(mapped.extensions).toEqual({ code: 'illegalArguments', reasonCode: 'illegalArguments', status: 400, details: 'the field name' });
    expect(mapped.originalError).toBe(error);
  });

  it('known failures become their domain errors; anything else stays as it is (the server masks it)', () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    expect((graphqlErrorOf(deadlock) as GraphQLError).extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
    const badText = Object.assign(new Error('invalid byte sequence'), { code: '22021' });
    expect((graphqlErrorOf(badText) as GraphQLError).extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    const bug = new TypeError('x is undefined');
    expect(graphqlErrorOf(bug)).toBe(bug);
  });
});
