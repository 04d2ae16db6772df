import net from 'node:net';
import type { ExecutionResult } from 'graphql';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpExecutor } from './transport.js';

/** A subgraph that accepts connections and drops each one after 300 ms. */
let server: net.Server;
let port = 0;
beforeAll(async () => {
  server = net.createServer((socket) => setTimeout(() => socket.destroy(), 300));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('split-mode queries to a subgraph that never answers', () => {
  it('are given up at the deadline with an unavailable error', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket)); // accepts, reads, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/graphql`;
      const execute = httpExecutor('content', url, undefined, 300);
      const started = Date.now();
      const result = (await execute({ document: parse('{ __typename }'), operationType: 'query' as never })) as ExecutionResult;
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'unavailable', status: 503 });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('split-mode subscriptions to a subgraph that fails', () => {
  it('a subscriber who leaves while the connection is still pending leaves nothing unhandled', async () => {
    const execute = httpExecutor('health', `http://127.0.0.1:${port}/graphql`);
    const result = (await execute({ document: parse('subscription { healthChanges { status } }'), operationType: 'subscription' as never })) as AsyncIterable<ExecutionResult>;
    const iterator = result[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((r) => setTimeout(r, 100));
    await iterator.return?.();
    // the pending connection fails at 300 ms; an unhandled rejection would fail this test run
    await new Promise((r) => setTimeout(r, 500));
    expect(await first).toBeDefined();
  });

  it('a subscription to a subgraph that drops the connection ends with an unavailable error', async () => {
    const execute = httpExecutor('health', `http://127.0.0.1:${port}/graphql`);
    const result = (await execute({ document: parse('subscription { healthChanges { status } }'), operationType: 'subscription' as never })) as AsyncIterable<ExecutionResult>;
    const iterator = result[Symbol.asyncIterator]();
    const step = await iterator.next();
    expect(step.value?.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'unavailable', status: 503 });
    expect((await iterator.next()).done).toBe(true);
  });
});
