/**
 * Worker thread that computes MD5 digests for md5-hasher.ts, so hashing an upload runs beside
 * the main thread's stream plumbing instead of in it (MD5 is ~650 MB/s on one core).
 *
 * Messages in: {op:'update', id, data: ArrayBuffer, length} · {op:'digest', id} · {op:'abort', id}.
 * Messages out: {op:'ack', id, bytes, data (the buffer, transferred back)} · {op:'digest', id, hex}. A port delivers in order, so a
 * digest always follows the updates posted before it.
 */
import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

type Message =
  | { op: 'update'; id: number; data: ArrayBuffer; length: number }
  | { op: 'digest'; id: number }
  | { op: 'abort'; id: number };

const port = parentPort;
if (!port) throw new Error('md5-worker must run in a worker thread');
const jobs = new Map<number, Hash>();

port.on('message', (message: Message) => {
  switch (message.op) {
    case 'update': {
      let hash = jobs.get(message.id);
      if (!hash) {
        hash = createHash('md5');
        jobs.set(message.id, hash);
      }
      hash.update(new Uint8Array(message.data, 0, message.length));
      // Hand the buffer back so the main thread can reuse it (no garbage, bounded memory).
      port.postMessage({ op: 'ack', id: message.id, bytes: message.length, data: message.data }, [message.data]);
      break;
    }
    case 'digest': {
      const hash = jobs.get(message.id) ?? createHash('md5');
      jobs.delete(message.id);
      port.postMessage({ op: 'digest', id: message.id, hex: hash.digest('hex') });
      break;
    }
    case 'abort':
      jobs.delete(message.id);
      break;
  }
});
