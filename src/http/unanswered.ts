import type { Server, ServerResponse } from 'node:http';
import { errorBody } from '../errors.js';

/**
 * The requests a server has not answered yet, so that a stop whose drain time is up can answer them
 * (a slow upload, say) with a 503 `unavailable`, `Retry-After` and `Connection: close` instead of
 * closing their connections without a word: the client then knows to send the request again.
 */
export function trackUnanswered(server: Server): { answerWithUnavailable(retryAfterSeconds: number): number } {
  const open = new Set<ServerResponse>();
  server.on('request', (_request, response: ServerResponse) => {
    open.add(response);
    response.once('close', () => open.delete(response));
  });
  return {
    /** answers every request whose answer has not begun; returns how many */
    answerWithUnavailable(retryAfterSeconds) {
      let answered = 0;
      for (const response of open) {
        if (response.headersSent || response.destroyed) continue;
        const body = JSON.stringify(errorBody(503, 'unavailable', 'the service is stopping: send the request again'));
        response.writeHead(503, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'retry-after': String(retryAfterSeconds),
          connection: 'close',
        });
        response.end(body);
        answered++;
      }
      return answered;
    },
  };
}
