import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent } from '../../../test/helpers/entries.js';
import { startServiceProcess, type ServiceProcess } from '../../../test/helpers/process.js';
import { createTestDatabase, startTestService, type TestService } from '../../../test/helpers/service.js';
import { freePort } from '../../net.js';

/**
 * `POST /api/v1/authenticate` from a chosen loopback address (Linux routes all of 127/8 to lo), so each
 * test is its own client as far as the per-address limit goes.
 */
function authenticateFrom(baseUrl: string, address: string, user: string, password: string) {
  const url = `${baseUrl}/api/v1/authenticate?user=${encodeURIComponent(user)}&password=${encodeURIComponent(password)}`;
  return new Promise<{ status: number; retryAfter?: string; body: any }>((resolve, reject) => {
    const request = http.request(url, { method: 'POST', localAddress: address, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end();
  });
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

let service: TestService;
let other: ServiceProcess;
beforeAll(async () => {
  const database = await createTestDatabase();
  service = await startTestService({ DATABASE_URL: database });
  // a second instance of the service, in a process of its own, on the same database and storage
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-second-'));
  other = await startServiceProcess({
    DATABASE_URL: database,
    DATA_DIR: dataDir,
    CONTENT_STORAGE_PATH: service.config.contentStoragePath,
    PORT: String(await freePort()),
    ADMIN_PASSWORD: 'admin-password-for-tests',
    LOG_LEVEL: 'warn',
  });
  const stop = other.stop;
  other.stop = async () => {
    await stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
});
afterAll(async () => {
  await other?.stop();
  await service?.stop();
});

describe('failed-login limits (counted in the database before the password is checked)', () => {
  it('lets exactly 5 of 100 concurrent wrong passwords for one user be checked, in any spelling of the name; the rest are 429 with Retry-After', async () => {
    await service.createUserSession('limited-user');
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => authenticateFrom(service.baseUrl, '127.0.1.1', i % 2 ? 'limited-user' : 'LIMITED-user', `guess-${i}`)),
    );
    const statuses = answers.map((a) => a.status);
    expect({ '401': count(statuses, 401), '429': count(statuses, 429) }).toEqual({ '401': 5, '429': 95 });
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body).toMatchObject({ status: 429, reasonCode: 'tooManyRequests' });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    // the right password is refused too until the window ends: it cannot be guessed in the 96th try
    expect((await authenticateFrom(service.baseUrl, '127.0.1.2', 'limited-user', 'limited-user-password')).status).toBe(429);
  }, 120_000); // password hashes one at a time (one user's queue): 16 s at rest in CI beside other files, over 30 s on a loaded machine

  it('lets 12 concurrent right passwords for one user all log in (each success gives its attempt back before the next is counted)', async () => {
    await service.createUserSession('busy-user');
    const answers = await Promise.all(Array.from({ length: 12 }, () => authenticateFrom(service.baseUrl, '127.0.6.1', 'busy-user', 'busy-user-password')));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    // and the count is back at zero: five typos are still checked
    for (let i = 0; i < 5; i++) expect((await authenticateFrom(service.baseUrl, '127.0.6.1', 'busy-user', `typo-${i}`)).status).toBe(401);
  }, 120_000); // 17 password hashes one at a time (one user's queue), as above

  it('counts failures per address: of 100 concurrent unknown users at most 30 are checked, and after 30 failures every login from it is 429', async () => {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => authenticateFrom(service.baseUrl, '127.0.2.1', `unknown-${i}`, 'some-password')),
    );
    const statuses = answers.map((a) => a.status);
    // a login the hashing queue refuses (503) was not checked and does not count
    expect(count(statuses, 401) + count(statuses, 429) + count(statuses, 503)).toBe(100);
    expect(count(statuses, 401)).toBeGreaterThan(0);
    expect(count(statuses, 401)).toBeLessThanOrEqual(30);
    // one after another up to the 30th failure; then refused, a user with the right password too
    let failures = count(statuses, 401);
    for (let i = 0; failures < 30; i++) {
      expect((await authenticateFrom(service.baseUrl, '127.0.2.1', `unknown-again-${i}`, 'some-password')).status).toBe(401);
      failures++;
    }
    const refused = await authenticateFrom(service.baseUrl, '127.0.2.1', 'admin', 'admin-password-for-tests');
    expect(refused).toMatchObject({ status: 429, body: { reasonCode: 'tooManyRequests' } });
    // another address is not affected
    expect((await authenticateFrom(service.baseUrl, '127.0.2.2', 'unknown-0', 'some-password')).status).toBe(401);
  }, 240_000); // up to 30 password hashes one at a time, after 100 at once: 61 s at load 10

  it('lets 32 users log in at once from one address: each is in or asked to retry (503, the hashing queue), none refused as a guesser', async () => {
    const users = Array.from({ length: 32 }, (_, i) => `crowd-${i}`);
    for (const user of users) await service.createUserSession(user);
    const answers = await Promise.all(users.map((user) => authenticateFrom(service.baseUrl, '127.0.7.1', user, `${user}-password`)));
    const statuses = answers.map((a) => a.status);
    expect(count(statuses, 200) + count(statuses, 503)).toBe(32);
    expect(count(statuses, 200)).toBeGreaterThan(0);
  }, 300_000); // 32 users made (a hash each), then 32 logins: 119.7 s of 120 at load 10, timed out at load 20

  it('gives a successful login its attempt back', async () => {
    await service.createUserSession('returning-user');
    for (let i = 0; i < 4; i++) expect((await authenticateFrom(service.baseUrl, '127.0.3.1', 'returning-user', `typo-${i}`)).status).toBe(401);
    expect((await authenticateFrom(service.baseUrl, '127.0.3.1', 'Returning-User', 'returning-user-password')).status).toBe(200);
    // the user's count started again: four more typos are still checked
    for (let i = 0; i < 4; i++) expect((await authenticateFrom(service.baseUrl, '127.0.3.1', 'returning-user', `typo-again-${i}`)).status).toBe(401);
  }, 120_000); // 9 password hashes one at a time (one user's queue), as above: past 30 s at load 20

  it('shares one count between two instances of the service on one database', async () => {
    await service.createUserSession('shared-victim');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => authenticateFrom(i % 2 ? service.baseUrl : other.baseUrl, '127.0.4.1', 'shared-victim', `guess-${i}`)),
    );
    expect(count(answers.map((a) => a.status), 401)).toBe(5);
    expect(count(answers.map((a) => a.status), 429)).toBe(15);
    for (const baseUrl of [service.baseUrl, other.baseUrl]) {
      expect((await authenticateFrom(baseUrl, '127.0.4.2', 'shared-victim', 'shared-victim-password')).status).toBe(429);
    }
  }, 120_000); // 5 password hashes one at a time, in two processes: past 30 s at load 20
});

describe('password hashing under a login flood', () => {
  it('keeps a 1 KB download fast while 300 logins arrive at once: hashing is bounded, the excess refused with 503 and Retry-After', async () => {
    const content = await newContent(service, { name: 'one-kilobyte.bin', bytes: 'x'.repeat(1024) });
    const downloadUrl = `${other.baseUrl}/api/v1/access.svc.content.default/v1/content/${content.id}/download?sessionId=${service.adminSession}`;
    const timeDownload = async () => {
      const started = performance.now();
      const response = await fetch(downloadUrl);
      expect((await response.arrayBuffer()).byteLength).toBe(1024);
      return performance.now() - started;
    };
    const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * p)]!;
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await timeDownload());

    // 300 different unknown users from 10 addresses: every login passes the limits and wants a hash
    let settled = false;
    const flood = Promise.all(
      Array.from({ length: 300 }, (_, i) => authenticateFrom(other.baseUrl, `127.0.5.${1 + (i % 10)}`, `flood-${i}`, 'flood-password')),
    ).finally(() => (settled = true));
    const during: number[] = [];
    while (!settled) during.push(await timeDownload());
    const answers = await flood;

    const statuses = answers.map((a) => a.status);
    expect(count(statuses, 401) + count(statuses, 503)).toBe(300);
    expect(count(statuses, 401)).toBeGreaterThan(0);
    const refused = answers.find((a) => a.status === 503)!;
    expect(refused.body).toMatchObject({ status: 503, reasonCode: 'unavailable' });
    expect(refused.retryAfter).toBe('1');
    const summary = (values: number[]) => `median ${percentile(values, 0.5).toFixed(1)}, p95 ${percentile(values, 0.95).toFixed(1)}, max ${Math.max(...values).toFixed(1)}`;
    console.log(`1 KB download ms: alone ${summary(baseline)}; during the flood (${during.length} downloads) ${summary(during)}`);
    expect(during.length).toBeGreaterThanOrEqual(10);
    // measured on this shared 2-core machine under load 14-18: alone median 4-7 ms; during the flood
    // median 6.7 ms, p95 42-115 ms; without the bound every download waited seconds (the test timed
    // out). The bounds are 100 ms and 1 s where a download alone is fast, and grow with the machine's
    // load as the download alone measures it (at load 20 a download alone took a median of 63 ms).
    expect(percentile(during, 0.5)).toBeLessThan(Math.max(100, 3 * percentile(baseline, 0.5)));
    expect(percentile(during, 0.9)).toBeLessThan(Math.max(1_000, 10 * percentile(baseline, 0.9)));
  }, 120_000);
});
