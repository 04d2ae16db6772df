import type pg from 'pg';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Has a node-postgres client answer its promise-form queries (`client.query(text, values)`: what Kysely,
 * MikroORM and our statements call) through pg's callback form, with the same promise to the caller.
 *
 * The promise form stores its callback into the pg `Query` after making it, from a promise's executor;
 * V8's young-generation collections then keep every such query's result (its rows) alive until a full
 * collection: about 9 % of all a search allocated was copied twice and promoted, 10–90 ms a scavenge
 * (docs/benchmarks.md, "search — what the scavenges keep"). Given to the `Query` when it is made, the
 * callback keeps nothing.
 *
 * For a pool: `pool.on('connect', answerInCallbackForm)`, so every client it opens answers this way.
 */
export function answerInCallbackForm(client: pg.Client): void {
  const query = client.query as unknown as Query;
  const callbackForm: Query = function (this: pg.Client, config, values, callback) {
    // the callback forms and a submittable (a cursor, a pg Query) go as they are
    if (typeof callback === 'function' || typeof values === 'function' || typeof (config as { submit?: unknown } | null)?.submit === 'function') {
      return query.call(this, config, values, callback);
    }
    return new Promise((resolve, reject) => {
      query.call(this, config, values, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)));
    }).catch((error: Error) => {
      // as pg's promise form: a stack that leads back to the caller, not to the socket's read
      Error.captureStackTrace(error);
      throw error;
    });
  };
  (client as unknown as { query: Query }).query = callbackForm;
}
