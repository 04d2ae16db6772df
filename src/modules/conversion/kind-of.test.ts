import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { textPdf } from '../../../test/helpers/pdf.js';
import { kindOf } from './convert-job.js';

describe('kindOf', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kind-of-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, bytes: Buffer) => {
    const at = path.join(dir, name);
    writeFileSync(at, bytes);
    return at;
  };

  it('takes a declared PDF as one without opening its file', async () => {
    await expect(kindOf(path.join(dir, 'missing.pdf'), 'application/pdf', 'missing.pdf')).resolves.toBe('pdf');
  });

  it('finds a PDF by its first bytes whatever its declared type, and an image by its declared type', async () => {
    const pdf = file('a.bin', textPdf(1));
    await expect(kindOf(pdf, 'application/octet-stream', 'a.bin')).resolves.toBe('pdf');
    await expect(kindOf(pdf, 'image/png', 'a.bin')).resolves.toBe('pdf');
    await expect(kindOf(file('b.png', Buffer.from('not a pdf')), 'image/png', 'b.png')).resolves.toBe('image');
  });

  it('refuses anything else, and an undeclared file it cannot read', async () => {
    await expect(kindOf(file('c.txt', Buffer.from('plain text')), 'text/plain', 'c.txt')).rejects.toMatchObject({ reasonCode: 'unsupportedMediaType' });
    await expect(kindOf(path.join(dir, 'missing.png'), 'image/png', 'missing.png')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
