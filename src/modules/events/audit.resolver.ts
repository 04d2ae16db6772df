import { Arg, Authorized, Ctx, Field, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { entryScope } from '../entries/scope-of-request.js';
import { auditEvents } from './audit.js';
import type { EventType } from './event-types.js';
import { ContentEventNode, EventTypeEnum } from './events.resolver.js';

@ObjectType('AuditEventsPage', { description: 'a page of the audit trail, newest first' })
class AuditEventsPageNode {
  @Field(() => Int, { description: 'all matching events the caller may see, not the page size' }) count!: number;
  @Field(() => Int, { description: 'milliseconds the query took' }) duration!: number;
  @Field(() => [ContentEventNode], { description: 'the events of this page' }) entries!: ContentEventNode[];
}

@Resolver()
export class AuditResolver {
  @Authorized()
  @Query(() => AuditEventsPageNode, {
    description:
      "the audit trail (DESIGN §11): a repository's events (C/audit) or, without `repository`, the administration domain's (A/audit). Administrators see every event; anyone else the events of entries it may read, and its own logins",
  })
  async auditEvents(
    @Arg('repository', () => String, { nullable: true, description: "the repository's name; absent: the administration domain" }) repository: string | undefined,
    @Arg('entryId', () => ID, { nullable: true, description: 'only the events of this entry' }) entryId: string | undefined,
    @Arg('chronicalId', () => ID, { nullable: true, description: 'only the events of this chronicle' }) chronicalId: string | undefined,
    @Arg('actor', () => String, { nullable: true, description: 'only the events of this user' }) actor: string | undefined,
    @Arg('type', () => EventTypeEnum, { nullable: true, description: 'only the events of this type' }) type: EventType | undefined,
    @Arg('from', () => Date, { nullable: true, description: 'only the events at or after this time' }) from: Date | undefined,
    @Arg('to', () => Date, { nullable: true, description: 'only the events at or before this time' }) to: Date | undefined,
    @Arg('limit', () => Int, { nullable: true, description: 'default 100, at most 1000' }) limit: number | undefined,
    @Arg('offset', () => Int, { nullable: true, description: 'default 0' }) offset: number | undefined,
    @Ctx() context: RequestContext,
  ): Promise<AuditEventsPageNode> {
    const started = Date.now();
    const scope = repository === undefined || repository === null
      ? { em: context.em, services: context.services, principal: await context.principal(), repository: null }
      : await entryScope(context, repository);
    const page = await auditEvents(scope, { entryId, chronicalId, actor, type, from, to, limit, offset });
    return { ...page, duration: Date.now() - started };
  }
}
