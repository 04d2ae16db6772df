import { z } from 'zod';
import { readJsonObject } from '../../src/http/body.js';
import { DeleteWebhookDocument, EnableWebhookDocument, RegisterWebhookDocument, WebhooksDocument } from '../operations/documents.generated.js';
import { nonEmptyText, parse } from '../params.js';
import { adminDomain, route, type RestRoute } from '../route.js';
import { createdRecordReply, noContentReply, recordReply } from './results.js';

const byId = z.object({ id: nonEmptyText });

/** Webhooks of the administration domain (DESIGN §11, docs/events.md "Webhooks"). */
export const webhookRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: `${adminDomain}/webhook`,
    document: RegisterWebhookDocument,
    input: async (ctx, _params, { inputs }) => ({ input: inputs.fromJson('WebhookInput', await readJsonObject(ctx)) }),
    variables: (input) => input,
    reply: createdRecordReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/webhooks`,
    document: WebhooksDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: recordReply,
  }),
  route({
    method: 'DELETE',
    path: `${adminDomain}/webhook`,
    document: DeleteWebhookDocument,
    input: (ctx) => parse(byId, ctx.query),
    variables: (input) => input,
    reply: noContentReply,
  }),
  route({
    method: 'POST',
    path: `${adminDomain}/webhook/enable`,
    document: EnableWebhookDocument,
    input: (ctx) => parse(byId, ctx.query),
    variables: (input) => input,
    reply: recordReply,
  }),
];
