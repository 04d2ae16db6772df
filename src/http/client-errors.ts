import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from '../errors.js';

/**
 * The request line and headers of a request, at most (Node's default is 16 KiB): a condition of the
 * documented maximum length (10,000 characters, docs/search.md) percent-encoded whole is 30,000 bytes,
 * and must reach the search's own check.
 */
export const maxRequestHeadBytes = 64 * 1024;

/**
 * Requests Node's HTTP parser refuses (a request line and headers over maxRequestHeadBytes, such as a
 * GET with a very long search condition, or a malformed request) get the service's JSON error body
 * instead of Node's empty answer: 431 `tooLarge` or 400 `illegalArguments`.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (error.code === 'ECONNRESET' && !socket.readable)) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const body = JSON.stringify(
      tooLarge
        ? errorBody(431, 'tooLarge', `the request line and headers are too large (over ${maxRequestHeadBytes / 1024} KiB, or too many header fields); send long search conditions through GraphQL (POST /graphql)`)
        : errorBody(400, 'illegalArguments', 'malformed HTTP request'),
    );
    const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/**
 * An `Expect` other than 100-continue: a 417 with the service's error body (Node's own answer has none).
 * The body is not read: the connection ends with the answer.
 */
export function answerUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const expectation = String(request.headers.expect ?? '').slice(0, 64);
    const body = JSON.stringify(errorBody(417, 'illegalArguments', `Expect: '${expectation}' is not supported (only 100-continue)`));
    response.writeHead(417, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
  });
}

/**
 * `Expect: 100-continue`: the client waits before sending the body. Node answers 100 Continue to any
 * such request; here a body declared larger than `maxBodyBytes(request)` gets no invitation, only the
 * application's answer (413 for an upload), so that it is never sent.
 */
export function continueUnlessLargerThan(server: Server, maxBodyBytes: (request: IncomingMessage) => number): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers['content-length']);
    if (!(declared > maxBodyBytes(request))) response.writeContinue();
    server.emit('request', request, response);
  });
}
