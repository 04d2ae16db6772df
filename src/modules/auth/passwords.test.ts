import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PasswordHashing } from './passwords.js';

describe('password hashes', () => {
  const hashing = new PasswordHashing();
  const typedDecomposed = 'cr\u00e8me-br\u00fbl\u00e9e'.normalize('NFD');

  it('verify a password in either Unicode form against a new hash', async () => {
    const stored = await hashing.hash(typedDecomposed);
    expect(await hashing.verify(typedDecomposed, stored)).toBe(true);
    expect(await hashing.verify(typedDecomposed.normalize('NFC'), stored)).toBe(true);
    expect(await hashing.verify('creme-brulee', stored)).toBe(false);
  });

  it('still verify a hash made before normalisation, of the password as it was typed', async () => {
    const salt = randomBytes(16);
    const key = scryptSync(typedDecomposed, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const stored = `scrypt$${2 ** 15}$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await hashing.verify(typedDecomposed, stored)).toBe(true);
    expect(await hashing.verify('creme-brulee', stored)).toBe(false);
  });
});
