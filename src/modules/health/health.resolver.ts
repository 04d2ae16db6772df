import { setTimeout as sleep } from 'node:timers/promises';
import { Arg, Authorized, Ctx, Field, Int, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { illegalArguments } from '../../errors.js';
import { subscribeMappingErrors } from '../../graphql/errors.js';
import { checkHealth, type HealthStatus } from './operations.js';

@ObjectType('HealthStatus')
class HealthStatusNode {
  @Field(() => String) status!: string;
  @Field(() => Boolean) database!: boolean;
  @Field(() => Boolean) contentStorage!: boolean;
  @Field(() => Boolean) cacheStorage!: boolean;
  @Field(() => Date) checkedAt!: Date;
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
  healthChanges(@Root() status: HealthStatus, @Arg('intervalMs', () => Int, { nullable: true }) _intervalMs?: number): HealthStatus {
    return status;
  }
}
