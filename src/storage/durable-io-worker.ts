/**
 * Worker thread of durable-io.ts: runs one durable file-system sequence (durable-fs.ts) per message.
 *
 * In:  {id, op:'write', file, data: Uint8Array} · {id, op:'place', tempPath, target, parentKnown}
 *      · {id, op:'writeAndPlace', file, data, target, parentKnown}
 * Out: {id} when done · {id, error: {message, code, syscall, path}} when it failed.
 */
import { parentPort } from 'node:worker_threads';
import { runOperationSync, type DurableIoReply, type DurableIoRequest } from './durable-io.js';

const port = parentPort;
if (!port) throw new Error('durable-io-worker must run in a worker thread');

port.on('message', (request: DurableIoRequest) => {
  let reply: DurableIoReply;
  try {
    runOperationSync(request);
    reply = { id: request.id };
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    reply = { id: request.id, error: { message: e.message ?? String(error), code: e.code, syscall: e.syscall, path: e.path } };
  }
  port.postMessage(reply);
});
