import { Arg, Authorized, Ctx, Field, ID, InputType, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { graphqlEnum } from '../../graphql/enums.js';
import { EventTypeEnum } from '../events/events.resolver.js';
import type { EventType } from '../events/event-types.js';
import { deleteWebhook, enableWebhook, listWebhooks, registerWebhook, webhookStates, type WebhookRecord, type WebhookRegistration, type WebhookState } from './operations.js';

const WebhookStateEnum = graphqlEnum(webhookStates, {
  name: 'WebhookState',
  description: "whether a webhook's deliveries go out",
  valuesConfig: {
    active: { description: 'its events are delivered' },
    failing: { description: 'a delivery failed for the whole retry period (lastError says why): nothing goes out until an administrator enables it' },
  },
});

@ObjectType('Webhook', { description: 'a receiver of signed events (docs/events.md "Webhooks"); its secret is never answered' })
class WebhookNode implements WebhookRecord {
  @Field(() => ID, { description: 'its id' }) id!: string;
  @Field(() => String, { description: 'where the events are POSTed' }) url!: string;
  @Field(() => [EventTypeEnum], { description: 'the event types delivered' }) events!: EventType[];
  @Field(() => String, { nullable: true, description: "the repository whose events it gets (null: all, and those of no repository such as logins)" }) repository!: string | null;
  @Field(() => WebhookStateEnum, { description: 'active or failing' }) state!: WebhookState;
  @Field(() => String, { nullable: true, description: 'why the last attempt failed (null once a delivery succeeds)' }) lastError!: string | null;
  @Field(() => Date, { nullable: true, description: 'since when it is failing' }) failingSince!: Date | null;
  @Field(() => Date, { description: 'when it was registered' }) createdAt!: Date;
  @Field(() => String, { description: 'the administrator who registered it' }) createdBy!: string;
}

@InputType('WebhookInput', { description: 'a webhook to register' })
class WebhookInputNode implements WebhookRegistration {
  @Field(() => String, { description: 'an http or https URL whose host resolves to public addresses (unless WEBHOOK_ALLOW_PRIVATE=true)' }) url!: string;
  @Field(() => [EventTypeEnum], { description: 'the event types to deliver (at least one)' }) events!: EventType[];
  @Field(() => String, { nullable: true, description: "only this repository's events" }) repository?: string | null;
  @Field(() => String, { description: 'the key of the X-Signature-256 HMAC (16 to 256 characters); never answered' }) secret!: string;
}

@Authorized('ADMIN')
@Resolver()
export class WebhooksResolver {
  @Query(() => [WebhookNode], { description: 'every webhook, oldest first, with its state' })
  async webhooks(@Ctx() context: RequestContext) {
    return listWebhooks(context.em);
  }

  @Mutation(() => WebhookNode, { description: 'registers a webhook: the committed events of its types are delivered from now on' })
  async registerWebhook(@Arg('input', () => WebhookInputNode) input: WebhookInputNode, @Ctx() context: RequestContext) {
    return registerWebhook(context.em, context.services, await context.principal(), input);
  }

  @Mutation(() => Boolean, { description: 'deletes a webhook with the deliveries it had queued' })
  async deleteWebhook(@Arg('id', () => ID, { description: 'its id' }) id: string, @Ctx() context: RequestContext): Promise<boolean> {
    await deleteWebhook(context.em, { id });
    return true;
  }

  @Mutation(() => WebhookNode, { description: 'makes a failing webhook active again; its queued deliveries are tried again at once' })
  async enableWebhook(@Arg('id', () => ID, { description: 'its id' }) id: string, @Ctx() context: RequestContext) {
    return enableWebhook(context.em, { id });
  }
}
