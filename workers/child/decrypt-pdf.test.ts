import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { decryptWithEmptyPassword } from './decrypt-pdf.js';

// qpdf's decryption with an empty password (docs/conversion.md, *Encrypted PDFs*): what the bounded
// children fall back on when pdf.js refuses a file for its password.
const fixture = (name: string) => readFile(new URL(`../../../test/fixtures/encrypted/${name}`, import.meta.url));

describe('decryptWithEmptyPassword', () => {
  it('writes out unencrypted a PDF whose owner password is the empty one', async () => {
    const decryption = await decryptWithEmptyPassword(await fixture('empty-owner-password.pdf'));
    expect('bytes' in decryption).toBe(true);
    const text = Buffer.from((decryption as { bytes: Uint8Array }).bytes).toString('latin1');
    expect(text.startsWith('%PDF-')).toBe(true);
    expect(text).not.toContain('/Encrypt');
  });

  it('answers why, without throwing, for a PDF that needs a password and for bytes that are no PDF', async () => {
    expect(await decryptWithEmptyPassword(await fixture('user-password.pdf'))).toEqual({ reason: 'invalid password' });
    const garbage = await decryptWithEmptyPassword(new TextEncoder().encode('not a PDF at all'));
    expect(garbage).toMatchObject({ reason: expect.any(String) });
    expect('bytes' in garbage).toBe(false);
  });
});
