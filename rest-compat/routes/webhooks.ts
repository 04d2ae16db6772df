import { z } from 'zod';
import { DeleteWebhookDocument, EnableWebhookDocument, RegisterWebhookDocument, WebhooksDocument } from '../operations/documents.generated.js';
import { nonEmptyText } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { webhookSchema } from '../shapes/schemas.js';
import { createdRecordReply, noContentReply, recordReply } from './results.js';

const byId = z.object({ id: nonEmptyText });

/** Webhooks of the administration domain (DESIGN §11, docs/events.md "Webhooks"). */
export const webhookRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${adminDomain}/webhook`,
    summary: 'Register a webhook: signed deliveries of the events named (the secret is never answered)',
    request: (inputs) => ({ body: { kind: 'json', schema: inputs.json('WebhookInput') } as const }),
    responses: { 201: webhookSchema },
    document: RegisterWebhookDocument,
    variables: ({ body }) => ({ input: body }),
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/webhooks`,
    summary: 'The webhooks, with their state and last error',
    responses: { 200: z.array(webhookSchema) },
    document: WebhooksDocument,
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/webhook`,
    summary: 'Delete a webhook and its queued deliveries',
    request: () => ({ query: byId }),
    responses: { 204: null },
    document: DeleteWebhookDocument,
    variables: ({ query }) => query,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/webhook/enable`,
    summary: 'Enable a failing webhook again: its queued deliveries are retried at once',
    request: () => ({ query: byId }),
    responses: { 200: webhookSchema },
    document: EnableWebhookDocument,
    variables: ({ query }) => query,
    reply: recordReply,
  }),
];
