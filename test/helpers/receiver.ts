import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a webhook receiver got: its headers and raw body, and when. */
export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  at: number;
}

/** How the receiver answers a request: a status after a delay; 'hang' never answers. */
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> } | 'hang';

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: keeps every request (raw body included) and
 * answers as `answer` says (default 200 at once). `close` ends it, hanging requests included.
 */
export async function startReceiver(answer: (delivery: ReceivedDelivery, index: number) => Answer = () => ({ status: 200 })) {
  const received: ReceivedDelivery[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const delivery = { headers: request.headers, rawBody: Buffer.concat(chunks), at: Date.now() };
      received.push(delivery);
      const how = answer(delivery, received.length - 1);
      if (how === 'hang') return;
      setTimeout(() => response.writeHead(how.status, how.headers).end(), how.delayMs ?? 0);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    /** the parsed bodies */
    events: () => received.map((delivery) => JSON.parse(delivery.rawBody.toString()) as { id: string; type: string; entryId: string | null; details: Record<string, unknown> }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
