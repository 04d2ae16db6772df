import type { FileHandle } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { StoredFileUnavailableError } from './store.js';

/** Chunk size of downloads. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Sends bytes `start`..`end` (inclusive) of an open file to a response through two buffers used in
 * turn: the next chunk is read while the previous one is written. A read stream allocates a new buffer
 * per chunk, and on a large heap that garbage costs more than the copy (measured: about half the
 * throughput). Resolves when everything was handed to the socket, or when the client went away (a
 * failed write means that too: there is nobody left to tell, and a rejection nobody awaits yet would
 * end the process); `complete` says which. A failed read destroys the response, so the client sees
 * the transfer fail.
 */
export async function sendFile(res: ServerResponse, file: FileHandle, start: number, end: number): Promise<{ complete: boolean; bytes: number }> {
  const chunk = Math.min(CHUNK_BYTES, end - start + 1);
  const buffers = [Buffer.allocUnsafeSlow(chunk), Buffer.allocUnsafeSlow(chunk)];
  const written: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
  let closed = false;
  let onClose = () => undefined as void;
  // Node drops the callback of a write to a socket destroyed before the response's 'close' event
  // (`_writeRaw` returns false): every wait also ends when the response closes, or a client gone at
  // that moment held this download and its file open for ever
  const closing = new Promise<void>((resolve) => {
    onClose = () => {
      closed = true;
      resolve();
    };
  });
  res.once('close', onClose);
  const untilClosed = (promise: Promise<void>) => Promise.race([promise, closing]);
  try {
    let position = start;
    for (let turn = 0; position <= end && !closed; turn ^= 1) {
      // this buffer's previous chunk must be on the socket before it is filled again
      await untilClosed(written[turn]!);
      if (closed || res.destroyed || res.socket?.destroyed) {
        closed = true;
        break;
      }
      const { bytesRead } = await file.read(buffers[turn]!, 0, Math.min(chunk, end - position + 1), position);
      if (bytesRead === 0) throw new StoredFileUnavailableError(`ended at byte ${position}, before ${end + 1}`);
      position += bytesRead;
      written[turn] = new Promise<void>((resolve) => {
        res.write(buffers[turn]!.subarray(0, bytesRead), (error) => {
          if (error) closed = true;
          resolve();
        });
      });
    }
    await untilClosed(Promise.all(written).then(() => undefined));
    if (!closed) await untilClosed(new Promise<void>((resolve) => res.end(resolve)));
    return { complete: !closed, bytes: position - start };
  } catch (error) {
    res.destroy(error as Error);
    throw error;
  } finally {
    res.off('close', onClose);
  }
}
