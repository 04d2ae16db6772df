import { createPubSub } from '@graphql-yoga/subscription';

/**
 * In-process publish/subscribe for GraphQL subscriptions. Events published here reach subscribers of
 * the same process; job workers in other processes publish through the job store (see workers/).
 */
export const pubSub = createPubSub();

/** `iterator` calling `stop` when its consumer ends it (`return()`: a subscription closed), before passing the call on. */
export function stoppingWith<T>(iterator: AsyncIterableIterator<T>, stop: () => void): AsyncIterableIterator<T> {
  const stopping: AsyncIterableIterator<T> = {
    next: () => iterator.next(),
    return: async (value?: unknown) => {
      stop();
      return iterator.return ? iterator.return(value) : { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => stopping,
  };
  return stopping;
}
