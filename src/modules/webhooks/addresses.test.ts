import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { isForbiddenAddress, resolveAllowed } from './addresses.js';

// The address rules of webhooks (docs/events.md "Address rules"): server-side request forgery.
describe('webhook address rules', () => {
  it('forbids loopback, unspecified, private, link-local, multicast and reserved addresses, IPv4 and IPv6, IPv4-mapped too', () => {
    const forbidden = [
      '127.0.0.1', '127.255.255.254', '0.0.0.0', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255',
      '169.254.169.254', '100.64.0.1', '224.0.0.1', '239.255.255.250', '255.255.255.255',
      '::1', '::', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:7f00:1',
    ];
    for (const address of forbidden) expect(isForbiddenAddress(address), address).toBe(true);
    const allowed = ['93.184.216.34', '8.8.8.8', '172.15.255.255', '172.32.0.1', '192.169.0.1', '11.0.0.1', '2606:4700:4700::1111', '2001:db8::1', '::ffff:8.8.8.8'];
    for (const address of allowed) expect(isForbiddenAddress(address), address).toBe(false);
  });

  it('refuses a name that resolves to a forbidden address: localhost, and a name a resolver answers 127.0.0.1 for', async () => {
    await expect(resolveAllowed(new URL('http://localhost:8080/hook'), false)).rejects.toMatchObject({ reasonCode: 'illegalArguments', message: expect.stringMatching(/'localhost' resolves to (127\.0\.0\.1|::1)/) });
    // a public-looking name whose DNS answers a private address among public ones
    const rebinding = (async () => [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }]) as never;
    await expect(resolveAllowed(new URL('https://hooks.example.com/x'), false, rebinding)).rejects.toMatchObject({ message: expect.stringMatching(/resolves to 127\.0\.0\.1/) });
    const publicOnly = (async () => [{ address: '93.184.216.34', family: 4 }]) as never;
    expect(await resolveAllowed(new URL('https://hooks.example.com/x'), false, publicOnly)).toEqual([{ address: '93.184.216.34', family: 4 }]);
    // address literals need no resolver; brackets of IPv6 literals are no part of the address
    await expect(resolveAllowed(new URL('http://[::ffff:127.0.0.1]/x'), false)).rejects.toMatchObject({ reasonCode: 'illegalArguments' });
    expect(await resolveAllowed(new URL('http://[2606:4700:4700::1111]/x'), false)).toEqual([{ address: '2606:4700:4700::1111', family: 6 }]);
    // allowed when the deployment says so
    expect(await resolveAllowed(new URL('http://127.0.0.1/x'), true)).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('reads WEBHOOK_ALLOW_PRIVATE as true or false only (default false)', () => {
    expect(loadConfig({}).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(/WEBHOOK_ALLOW_PRIVATE/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '0' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });
});
