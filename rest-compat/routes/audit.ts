import { z } from 'zod';
import { single } from '../../src/http/query.js';
import { eventTypes } from '../../src/modules/events/index.js';
import { AuditEventsDocument, type AuditEventsQuery } from '../operations/documents.generated.js';
import { limit, nonEmptyText, offset } from '../params.js';
import { adminDomain, contentDomain, route, type RestRoute } from '../route.js';
import { parseRestDate, restDate } from '../shapes/dates.js';
import { auditEventsResponseSchema } from '../shapes/schemas.js';

/** A date parameter in the REST form (spec "Dates"), handed to GraphQL as ISO. */
const restDateParameter = single(
  z.string().transform((text, context) => {
    const date = parseRestDate(text);
    if (date) return date.toISOString();
    context.addIssue({ code: 'custom', message: 'must be a date like 2026-11-28T04:00:00.000+0000' });
    return z.NEVER;
  }),
);

/** The filters of the audit trail (DESIGN §11); the operation checks what they mean together (from after to). */
const auditQuery = z.object({
  entryId: nonEmptyText.optional(),
  chronicalId: nonEmptyText.optional(),
  actor: nonEmptyText.optional(),
  type: single(z.enum(eventTypes, { message: 'must be an event type (docs/events.md)' })).optional(),
  from: restDateParameter.optional(),
  to: restDateParameter.optional(),
  limit: limit.optional(),
  offset: offset.optional(),
});

const auditReply = ({ result }: AuditEventsQuery) => ({
  body: {
    count: result.count,
    duration: result.duration,
    entries: result.entries.map((event) => ({ ...event, at: restDate(event.at) })),
  },
});

/** The audit trail: a repository's events (C/audit) and the administration domain's (A/audit), newest first. */
export const auditRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: `${contentDomain}/audit`,
    summary: "The repository's audit trail (DESIGN §11): events of the entries the caller may read, newest first",
    request: () => ({ query: auditQuery }),
    responses: { 200: auditEventsResponseSchema },
    document: AuditEventsDocument,
    variables: ({ params, query }) => ({ repository: params.repository!, ...query }),
    reply: auditReply,
  }),
  route({
    method: 'GET',
    path: `${adminDomain}/audit`,
    summary: "The administration domain's audit trail: repositories, policies, users, groups and logins (a user: its own logins)",
    request: () => ({ query: auditQuery }),
    responses: { 200: auditEventsResponseSchema },
    document: AuditEventsDocument,
    variables: ({ query }) => query,
    reply: auditReply,
  }),
];
