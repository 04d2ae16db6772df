/**
 * Worker of durable-io.ts (a piscina task): runs one durable file-system sequence (durable-fs.ts).
 * A failure is the reply `{error: {message, code, syscall, path}}`, so its code survives the thread boundary.
 */
import { placeFileSync, writeNewFileSync } from './durable-fs.js';
import type { DurableIoReply, DurableIoRequest } from './durable-io.js';

export default function runDurableIo(request: DurableIoRequest): DurableIoReply {
  try {
    if (request.op === 'write') writeNewFileSync(request.file, request.data);
    else placeFileSync(request.tempPath, request.target, request.parentKnown);
    return {};
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    return { error: { message: e.message ?? String(error), code: e.code, syscall: e.syscall, path: e.path } };
  }
}
