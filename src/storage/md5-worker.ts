/**
 * Worker of md5-hasher.ts: one piscina task per MD5 job, so hashing an upload runs beside the main
 * thread's stream plumbing instead of in it (MD5 is ~650 MB/s on one core). The job's bytes arrive
 * on its own port; the task ends with the digest.
 *
 * Port in: {op:'update', data: ArrayBuffer, length} · {op:'digest'} · {op:'abort'}.
 * Port out: {bytes, data (the buffer, transferred back for reuse)} per update. A port delivers in
 * order, so the digest covers every update posted before it.
 */
import { createHash } from 'node:crypto';
import type { MessagePort } from 'node:worker_threads';

type Message = { op: 'update'; data: ArrayBuffer; length: number } | { op: 'digest' } | { op: 'abort' };

export default function hashJob({ port }: { port: MessagePort }): Promise<string> {
  const hash = createHash('md5');
  return new Promise((resolve) => {
    port.on('message', (message: Message) => {
      if (message.op === 'update') {
        hash.update(new Uint8Array(message.data, 0, message.length));
        port.postMessage({ bytes: message.length, data: message.data }, [message.data]);
        return;
      }
      port.close();
      resolve(message.op === 'digest' ? hash.digest('hex') : '');
    });
  });
}
