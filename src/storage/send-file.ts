import fsp from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { IO_CHUNK_BYTES } from './file-store.js';

/**
 * Sends bytes `start`..`end` (inclusive) of a file to a response through two reused buffers: the next
 * chunk is read while the previous one is written. A read stream would allocate a new buffer per chunk,
 * and on a large heap that garbage costs more than the copy (measured: about half the throughput).
 * Resolves when everything was handed to the socket, or when the client went away (a failed write
 * means that too: there is nobody left to tell, and a rejection nobody awaits yet would end the process).
 */
export async function sendFile(res: ServerResponse, absolutePath: string, start: number, end: number): Promise<void> {
  const file = await fsp.open(absolutePath, 'r');
  const buffers = [Buffer.allocUnsafeSlow(IO_CHUNK_BYTES), Buffer.allocUnsafeSlow(IO_CHUNK_BYTES)];
  const written: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
  let closed = false;
  const onClose = () => (closed = true);
  res.once('close', onClose);
  try {
    let position = start;
    for (let turn = 0; position <= end && !closed; turn ^= 1) {
      // this buffer's previous chunk must be on the socket before it is filled again
      await written[turn];
      const { bytesRead } = await file.read(buffers[turn]!, 0, Math.min(IO_CHUNK_BYTES, end - position + 1), position);
      if (bytesRead === 0) throw new Error(`${absolutePath} ended at ${position}, before ${end + 1} bytes`);
      position += bytesRead;
      written[turn] = new Promise<void>((resolve) => {
        res.write(buffers[turn]!.subarray(0, bytesRead), (error) => {
          if (error) closed = true;
          resolve();
        });
      });
    }
    await Promise.all(written);
    if (!closed) await new Promise<void>((resolve) => res.end(resolve));
  } finally {
    res.off('close', onClose);
    await file.close();
  }
}
