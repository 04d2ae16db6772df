import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/net.js';
import { privateCheckout } from '../helpers/private-checkout.js';
import { startServiceProcess } from '../helpers/process.js';
import { call } from '../helpers/service.js';

/**
 * Issue 30, item 12: as root, `git clone … /root/crs && cd /root/crs && npm install && npm start`
 * stopped with "the user 'postgres' … cannot enter /root (mode 700)". The service is started here as
 * `npm start` starts it, from a built checkout inside a folder of mode 700, with DATA_DIR=.data.
 */
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.log('skipped: not run as root, Postgres runs as the service\'s own user, which reaches its checkout');

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('a service started from a checkout inside a private folder, as root', () => {
  it.runIf(asRoot)('answers /readyz, says where its database lives, and finds its data again after a restart', { timeout: 240_000 }, async () => {
    const checkout = await privateCheckout();
    cleanups.push(checkout.remove);
    const dataDir = path.join(checkout.root, '.data');
    const env = { PORT: String(await freePort()), DATA_DIR: dataDir, ADMIN_PASSWORD: 'private-checkout-password' };
    const start = () => startServiceProcess(env, { root: checkout.root, timeoutMs: 180_000 });

    const first = await start();
    cleanups.push(() => first.stop());
    const relocated = await fs.readlink(path.join(dataDir, 'pg'));
    // the cluster lives where the user postgres can reach it, named by a hash of the DATA_DIR
    cleanups.push(() => fs.rm(path.dirname(relocated), { recursive: true, force: true }));
    expect(relocated).toMatch(/^\/var\/lib\/crs\/[0-9a-f]{16}\/pg$/);
    expect(first.output()).toContain(`the embedded Postgres keeps its data in ${relocated}`);
    const login = async (baseUrl: string) => {
      const answer = await call(`${baseUrl}/api/v1/authenticate?user=admin&password=private-checkout-password`, { method: 'POST' });
      expect(answer.status).toBe(200);
      return answer.body as string;
    };
    const contentBase = (baseUrl: string) => `${baseUrl}/api/v1/access.svc.content.default/v1`;
    const session = await login(first.baseUrl);
    const created = await call(`${contentBase(first.baseUrl)}/folder?sessionId=${session}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'kept-across-restarts' }),
    });
    expect(created.status).toBe(201);
    await first.stop();

    const second = await start();
    cleanups.push(() => second.stop());
    expect((await call(`${second.baseUrl}/readyz`)).status).toBe(200);
    const again = await call(`${contentBase(second.baseUrl)}/folder/${created.body.id}?sessionId=${await login(second.baseUrl)}`);
    expect(again.status).toBe(200);
    expect(again.body.name).toBe('kept-across-restarts');
    await second.stop();
    // the operator's folder is left as it was
    expect((await fs.stat(checkout.privateFolder)).mode & 0o777).toBe(0o700);
  });
});
