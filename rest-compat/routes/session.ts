import { z } from 'zod';
import { AuthenticateDocument, LogoutDocument } from '../operations/documents.generated.js';
import { nonEmptyText } from '../params.js';
import { route, type RestRoute } from '../route.js';
import { noContentReply } from './results.js';

/** Session calls: spec endpoint 14 and logout (DESIGN §4). */
export const sessionRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: '/authenticate',
    summary: 'Log in: the answer is a session id',
    description: 'The session id goes into the `sessionId` query parameter of every other call (or `Authorization: Bearer <sessionId>`).',
    request: () => ({ query: z.object({ user: nonEmptyText.meta({ example: 'admin' }), password: nonEmptyText }) }),
    responses: { 200: z.string().meta({ description: 'the session id', example: 'q5mZ3yJkQbW0dX9c' }) },
    document: AuthenticateDocument,
    variables: ({ query }) => query,
    // the answer is the session id as a JSON string
    reply: ({ result }) => ({ body: JSON.stringify(result) }),
  }),
  route({
    method: 'POST',
    path: '/logout',
    summary: 'End the session',
    responses: { 204: null },
    document: LogoutDocument,
    variables: () => ({}),
    reply: noContentReply,
  }),
];
