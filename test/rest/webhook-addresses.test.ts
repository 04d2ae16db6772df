import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitEvents } from '../helpers/events.js';
import { startReceiver } from '../helpers/receiver.js';
import { adminUrl, call, json, startTestService, type TestService } from '../helpers/service.js';

// Server-side request forgery (docs/events.md "Address rules", docs/security.md): a service with the
// default WEBHOOK_ALLOW_PRIVATE=false registers and delivers to none of its host's or network's addresses.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_RETRY_MAX_MS: '100' });
});
afterAll(() => service?.stop());

const register = (url: string) => call(adminUrl(service, '/webhook'), json('POST', { url, events: ['ENTRY_CREATED'], secret: 'sixteen-characters' }));

describe('webhook address rules (WEBHOOK_ALLOW_PRIVATE=false)', () => {
  it('refuses at registration, with a 400 naming the address, every loopback, link-local, private, multicast or unspecified target', async () => {
    const refused = [
      ['http://127.0.0.1/hook', '127.0.0.1'],
      ['http://localhost:8080/hook', 'localhost'],
      ['http://[::1]/hook', '::1'],
      ['http://[fe80::1]/hook', 'fe80::1'],
      ['http://[fc00::1]/hook', 'fc00::1'],
      ['http://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1'],
      ['http://10.1.2.3/hook', '10.1.2.3'],
      ['http://172.16.0.1/hook', '172.16.0.1'],
      ['http://172.31.255.254/hook', '172.31.255.254'],
      ['http://192.168.1.1/hook', '192.168.1.1'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
      ['http://224.0.0.1/hook', '224.0.0.1'],
      ['http://0.0.0.0:8080/hook', '0.0.0.0'],
      ['http://2130706433/hook', '127.0.0.1'], // the decimal form of 127.0.0.1, as URL parsing reads it
    ];
    for (const [url, host] of refused) {
      const answer = await register(url!);
      expect(answer.status, url).toBe(400);
      expect(answer.body, url).toMatchObject({ reasonCode: 'illegalArguments' });
      expect(answer.body.message, url).toContain(host);
      expect(answer.body.message, url).toMatch(/WEBHOOK_ALLOW_PRIVATE/);
    }
    expect((await call(adminUrl(service, '/webhooks'))).body).toEqual([]);
    // public address literals are accepted (no name to resolve offline)
    for (const url of ['http://93.184.216.34/hook', 'https://[2606:4700:4700::1111]/hook', 'http://172.32.0.1/hook']) {
      const answer = await register(url);
      expect(answer.status, url).toBe(201);
      await call(adminUrl(service, '/webhook', { id: answer.body.id }), { method: 'DELETE' });
    }
  });

  it('checks again at delivery: a webhook whose host has come to resolve to a private address gets nothing, and says why', async () => {
    const receiver = await startReceiver();
    try {
      // as if the name resolved to a public address at registration (DNS rebinding): written past the registration check
      await service.services.orm.em.fork().execute(
        `insert into webhook (id, url, events, secret, created_by) values ('rebound', ?, '{ENTRY_CREATED}', 'sixteen-characters', 'admin')`,
        [`http://localhost:${receiver.port}/hook`],
      );
      await commitEvents(service, [{ type: 'ENTRY_CREATED', entryId: 'to-localhost' }]);
      await expect
        .poll(async () => ((await call(adminUrl(service, '/webhooks'))).body as { id: string; lastError: string | null }[]).find((w) => w.id === 'rebound')?.lastError, { timeout: 10_000 })
        .toMatch(/'localhost' resolves to .*WEBHOOK_ALLOW_PRIVATE/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});
