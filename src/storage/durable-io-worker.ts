/**
 * Worker thread of durable-io.ts: runs one durable file-system sequence (durable-fs.ts) per message.
 *
 * In:  {id, op:'write', file, data: Uint8Array} · {id, op:'place', tempPath, target, parentKnown}
 * Out: {id} when done · {id, error: {message, code, syscall, path}} when it failed.
 */
import { parentPort } from 'node:worker_threads';
import { placeFileSync, writeNewFileSync } from './durable-fs.js';
import type { DurableIoReply, DurableIoRequest } from './durable-io.js';

const port = parentPort;
if (!port) throw new Error('durable-io-worker must run in a worker thread');

port.on('message', (request: DurableIoRequest) => {
  let reply: DurableIoReply;
  try {
    if (request.op === 'write') writeNewFileSync(request.file, request.data);
    else placeFileSync(request.tempPath, request.target, request.parentKnown);
    reply = { id: request.id };
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    reply = { id: request.id, error: { message: e.message ?? String(error), code: e.code, syscall: e.syscall, path: e.path } };
  }
  port.postMessage(reply);
});
