import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('startEmbeddedPostgres', () => {
  it('starts on another port when the one it chose was taken before the postmaster bound it', async () => {
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => squatter.close(resolve)));
    const taken = (squatter.address() as net.AddressInfo).port;
    const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'embedded-pg-test-'));
    cleanups.push(() => fs.rm(directory, { recursive: true, force: true }));
    await fs.chmod(directory, 0o755); // run as root, the cluster belongs to a postgres user that must get in

    const cluster = await startEmbeddedPostgres({ directory: path.join(directory, 'pg'), logger: createLogger('silent'), ephemeral: true, port: taken });
    cleanups.push(() => cluster.stop());
    const port = Number(new URL(cluster.url).port);
    expect(port).not.toBe(taken);
    // the postmaster listens there
    await new Promise<void>((resolve, reject) => {
      const probe = net.connect({ host: '127.0.0.1', port }, () => {
        probe.end();
        resolve();
      });
      probe.once('error', reject);
    });
  });
});
