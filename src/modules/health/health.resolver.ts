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
    description: 'the health status, now and every intervalMs (100 to 60000) after',
    subscribe: subscribeMappingErrors(async ({ args, context }) => {
      const intervalMs = (args.intervalMs as number | undefined) ?? 1000;
      if (!Number.isInteger(intervalMs) || intervalMs < 100 || intervalMs > 60_000) throw illegalArguments('intervalMs must be from 100 to 60000');
      await (context as RequestContext).principal();
      return healthEvery(context as RequestContext, intervalMs);
    }),
  })
  healthChanges(@Root() status: HealthStatus, @Arg('intervalMs', () => Int, { nullable: true, description: 'ms between two statuses, 100 to 60000; default 1000' }) _intervalMs?: number): HealthStatus {
    return status;
  }
}
