import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildPool } from '../child/bounded-child.js';
import { extractionPool, textExtractor } from './extract-process.js';

let dir: string;
let pool: ChildPool;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'crs-extract-process-'));
  pool = extractionPool(1024, 1);
});
afterAll(async () => {
  pool.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the text extractor of the extraction jobs', () => {
  it('reads every kind of text in an extraction process, never in the service', async () => {
    const extractor = textExtractor(pool, 60_000);
    const read = async (fileName: string, kind: 'html' | 'plain', bytes: string) => {
      const inputPath = path.join(dir, fileName);
      await fs.writeFile(inputPath, bytes);
      return (await extractor.extract({ inputPath, fileName, kind, maxChars: 1_000, ocr: null }))?.text.replace(/\s+/g, ' ').trim();
    };
    expect([await read('page.html', 'html', '<p>pageword &amp; <!-- hidden --></p>'), await read('plain.txt', 'plain', 'plainword')]).toEqual(['pageword &', 'plainword']);
    // the one process of the pool read both, and waits for the next
    expect(pool.waitingPids).toHaveLength(1);
    expect(pool.waitingPids[0]).not.toBe(process.pid);
  });
});
