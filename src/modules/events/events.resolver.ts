import { Arg, Authorized, Field, ID, ObjectType, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { graphqlEnum } from '../../graphql/enums.js';
import { subscribeMappingErrors } from '../../graphql/errors.js';
import { JSONObject } from '../../graphql/scalars.js';
import { entryScope } from '../entries/scope-of-request.js';
import { watchContentEvents } from './content-events.js';
import { eventTypeDescriptions, eventTypes, type EventType } from './event-types.js';
import type { OutboxEvent } from './outbox.js';

export const EventTypeEnum = graphqlEnum(eventTypes, {
  name: 'EventType',
  description: 'what kind of change an event records (docs/events.md)',
  valuesConfig: Object.fromEntries(eventTypes.map((type) => [type, { description: eventTypeDescriptions[type] }])) as Record<EventType, { description: string }>,
});

@ObjectType('ContentEvent', { description: 'a committed change, as the outbox recorded it (docs/events.md): what contentEvents delivers and the audit trail lists' })
export class ContentEventNode implements OutboxEvent {
  @Field(() => ID, { description: 'the event id, increasing with commits: for deduplication' }) id!: string;
  @Field(() => Date, { description: 'when the change was made' }) at!: Date;
  @Field(() => String, { nullable: true, description: "the repository's name" }) repository!: string | null;
  @Field(() => EventTypeEnum, { description: 'what happened' }) type!: EventType;
  @Field(() => ID, { nullable: true, description: 'the entry it happened to' }) entryId!: string | null;
  @Field(() => ID, { nullable: true, description: "the entry's chronicle" }) chronicalId!: string | null;
  @Field(() => String, { nullable: true, description: 'the user who made the change (null: the service itself)' }) actor!: string | null;
  @Field(() => JSONObject, { description: 'what the type adds (docs/events.md)' }) details!: Record<string, unknown>;
}

@Authorized()
@Resolver()
export class LiveEventsResolver {
  @Subscription(() => ContentEventNode, {
    name: 'contentEvents',
    description:
      "the repository's changes as they commit, those the caller may read (administrators: all; others: events of entries they may read); with folderId, those of entries directly in the folder (and moved out of it)",
    subscribe: subscribeMappingErrors(async ({ args, context }) => {
      const scope = await entryScope(context as RequestContext, args.repository as string);
      return watchContentEvents(scope, (args.folderId as string | null | undefined) ?? undefined);
    }),
  })
  contentEvents(
    @Root() event: OutboxEvent,
    @Arg('repository', () => String, { description: "the repository's name" }) _repository: string,
    @Arg('folderId', () => ID, { nullable: true, description: 'only the events of entries directly in this folder' }) _folderId: string | undefined,
  ): OutboxEvent {
    return event;
  }
}
