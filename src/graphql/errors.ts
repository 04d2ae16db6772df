import { GraphQLError } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { ServiceError } from '../errors.js';
import { knownFailure } from './known-failures.js';

/**
 * A domain error as GraphQL clients (and the REST layer, which maps from the extensions) see it:
 * `extensions.code` and `reasonCode` name the reason, `status` is its HTTP status, `details` when given.
 */
export function toGraphQLError(error: ServiceError): GraphQLError {
  const { reasonCode, status, details, retryAfter } = error;
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: reasonCode, reasonCode, status, ...(details ? { details } : {}), ...(retryAfter ? { retryAfter } : {}) },
  });
}

/** What a thrown value becomes for GraphQL: domain errors and known failures mapped, anything else as is (masked later). */
export function graphqlErrorOf(error: unknown): unknown {
  const known = knownFailure(error) ?? error;
  return known instanceof ServiceError ? toGraphQLError(known) : known;
}

/** For every resolver (both APIs run through them): domain errors leave as GraphQL errors. */
export const mapDomainErrors: MiddlewareFn = async (_action, next) => {
  try {
    return await next();
  } catch (error) {
    throw graphqlErrorOf(error);
  }
};

/** A subscription's `subscribe` function whose domain errors leave as GraphQL errors (resolver middleware does not wrap `subscribe`). */
export function subscribeMappingErrors<Args extends unknown[], Result>(subscribe: (...args: Args) => Promise<Result>): (...args: Args) => Promise<Result> {
  return async (...args) => {
    try {
      return await subscribe(...args);
    } catch (error) {
      throw graphqlErrorOf(error);
    }
  };
}
