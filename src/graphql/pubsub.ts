import { createPubSub } from '@graphql-yoga/subscription';

/**
 * In-process publish/subscribe for GraphQL subscriptions. Events published here reach subscribers of
 * the same process; job workers in other processes publish through the job store (see workers/).
 */
export const pubSub = createPubSub();
