import { z } from 'zod';
import { AuthenticateDocument, LogoutDocument } from '../operations/documents.generated.js';
import { nonEmptyText, parse } from '../params.js';
import { route, type RestRoute } from '../route.js';
import { noContentReply } from './results.js';

/** Session calls: spec endpoint 14 and logout (DESIGN §4). */
export const sessionRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: '/authenticate',
    document: AuthenticateDocument,
    input: (ctx) => parse(z.object({ user: nonEmptyText, password: nonEmptyText }), ctx.query),
    variables: (input) => input,
    // the answer is the session id as a JSON string
    reply: ({ result }) => ({ body: JSON.stringify(result) }),
  }),
  route({
    method: 'POST',
    path: '/logout',
    document: LogoutDocument,
    input: () => ({}),
    variables: () => ({}),
    reply: noContentReply,
  }),
];
