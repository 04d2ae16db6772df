import { z } from 'zod';
import { nonEmptyText, parse } from '../params.js';
import { route, type GraphqlRoute } from '../route.js';

/** Session calls: spec endpoint 14 and logout (DESIGN §4). */
export const sessionRoutes: GraphqlRoute[] = [
  route({
    method: 'POST',
    path: '/authenticate',
    operation: 'authenticate',
    input: (ctx) => parse(z.object({ user: nonEmptyText, password: nonEmptyText }), ctx.query),
    variables: (input) => input,
    // the answer is the session id as a JSON string
    reply: (result) => ({ body: JSON.stringify(result) }),
  }),
  route({
    method: 'POST',
    path: '/logout',
    operation: 'logout',
    input: () => ({}),
    variables: () => ({}),
    reply: () => ({ status: 204 }),
  }),
];
