import { setTimeout as sleep } from 'node:timers/promises';
import { Arg, Authorized, Ctx, Field, Int, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { illegalArguments } from '../../errors.js';
import { subscribeMappingErrors } from '../../graphql/errors.js';
import { checkHealth, type HealthStatus } from './operations.js';

@ObjectType('HealthStatus', { description: 'the readiness of the service' })
class HealthStatusNode {
  @Field(() => String, { description: 'ok, or unavailable when a part below is not' }) status!: string;
  @Field(() => Boolean, { description: 'whether the database answers' }) database!: boolean;
  @Field(() => Boolean, { description: 'whether the content storage is writable' }) contentStorage!: boolean;
  @Field(() => Boolean, { description: 'whether the cache storage is writable' }) cacheStorage!: boolean;
  @Field(() => Date, { description: 'when the parts were checked' }) checkedAt!: Date;
}

const maxIntervalMs = 60_000;

/** Emits the service's health every `intervalMs` until the subscriber leaves. */
async function* healthEvery(context: RequestContext, intervalMs: number): AsyncGenerator<HealthStatus> {
  for (;;) {
    yield await checkHealth(context.services);
    await sleep(intervalMs);
  }
}

@Resolver()
export class HealthResolver {
  @Query(() => HealthStatusNode, { description: 'readiness of the database and the storage areas (no session needed)' })
  async health(@Ctx() context: RequestContext) {
    return checkHealth(context.services);
  }

  @Authorized()
  @Subscription(() => HealthStatusNode, {
    description: "the health status, now and every intervalMs after (at least the service's SUBSCRIPTION_MIN_INTERVAL_MS, 1000 by default; at most 60000)",
    subscribe: subscribeMappingErrors(async ({ args, context }) => {
      const { services } = context as RequestContext;
      const minimum = services.config.SUBSCRIPTION_MIN_INTERVAL_MS;
      const intervalMs = (args.intervalMs as number | undefined) ?? Math.max(1000, minimum);
      if (!Number.isInteger(intervalMs) || intervalMs < minimum || intervalMs > maxIntervalMs) {
        throw illegalArguments(`intervalMs must be at least ${minimum} (this service's SUBSCRIPTION_MIN_INTERVAL_MS) and at most ${maxIntervalMs}`);
      }
      await (context as RequestContext).principal();
      return healthEvery(context as RequestContext, intervalMs);
    }),
  })
  healthChanges(@Root() status: HealthStatus, @Arg('intervalMs', () => Int, { nullable: true, description: "ms between two statuses, from the service's minimum (1000 by default) to 60000; default 1000 or the minimum" }) _intervalMs?: number): HealthStatus {
    return status;
  }
}
