import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/service.js';
import { freePort } from '../../src/net.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/process.js';

/** Every file below a folder (the content store's bytes, without its temp area). */
function filesBelow(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}

// initdb and two cold starts: far more than the default 30 s when the machine is busy
describe('the service on its embedded Postgres, as `npm start` runs it', { timeout: 180_000 }, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let running: ServiceProcess | undefined;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-restart-'));
    await fs.chmod(dataDir, 0o755);
    env = { DATA_DIR: dataDir, PORT: String(await freePort()), ADMIN_PASSWORD: 'restart-test-password' };
  });
  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const login = async (base: string) => (await call(`${base}/api/v1/authenticate?user=admin&password=restart-test-password`, { method: 'POST' })).body as string;

  it('keeps its data across a SIGKILL and starts cleanly past the stale postmaster', async () => {
    running = await startServiceProcess(env);
    const contentBase = `${running.baseUrl}/api/v1/access.svc.content.default/v1`;
    let session = await login(running.baseUrl);
    const created = await call(`${contentBase}/folder?sessionId=${session}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'survives-a-crash' }),
    });
    expect(created.status).toBe(201);

    running.child.kill('SIGKILL');
    await running.exited;
    // the postmaster outlives its parent: this is the state the next start must handle
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(true);

    running = await startServiceProcess(env);
    session = await login(running.baseUrl);
    const found = await call(`${contentBase}/content/search?sessionId=${session}&name=survives-a-crash`);
    expect(found.body.count).toBe(1);
    expect(found.body.entries[0].id).toBe(created.body.id);
    expect(running.output()).toContain('stale embedded postmaster');
  });

  it('leaves no content and no orphan bytes when killed in the middle of an upload', async () => {
    const contentBase = `${running!.baseUrl}/api/v1/access.svc.content.default/v1`;
    const session = await login(running!.baseUrl);
    const boundary = 'crs-boundary';
    // a 64 MiB multipart upload sent slowly enough to be cut in the middle
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut.bin\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(head);
        for (let i = 0; i < 64; i++) {
          controller.enqueue(chunk);
          await new Promise((r) => setTimeout(r, 50));
        }
        controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
        controller.close();
      },
    });
    const upload = fetch(`${contentBase}/content?sessionId=${session}`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit).catch((error: unknown) => error);

    const temp = path.join(dataDir, 'storage', '.tmp');
    const until = Date.now() + 20_000;
    while (filesBelow(temp).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(filesBelow(temp).length).toBe(1);
    running!.child.kill('SIGKILL');
    await running!.exited;
    expect(await upload).toBeInstanceOf(Error);

    running = await startServiceProcess(env);
    const after = await login(running.baseUrl);
    const found = await call(`${running.baseUrl}/api/v1/access.svc.content.default/v1/content/search?sessionId=${after}&name=cut.bin`);
    expect(found.body.count).toBe(0);
    expect(filesBelow(path.join(dataDir, 'storage'))).toEqual([]);
  });

  it('drains and stops embedded Postgres on SIGTERM', async () => {
    // connections of every pool in use, then idle: the database must outlive them
    const session = await login(running!.baseUrl);
    const contentBase = `${running!.baseUrl}/api/v1/access.svc.content.default/v1`;
    expect((await call(`${contentBase}/content/search/by-text?sessionId=${session}&searchText=anything`)).status).toBe(200);
    running!.child.kill('SIGTERM');
    expect(await running!.exited).toBe(0);
    expect(running!.output()).toContain('service stopped');
    // the library's own signal handler no longer stops the cluster under the pools
    expect(running!.output()).not.toContain('terminating connection due to administrator command');
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  });
});
