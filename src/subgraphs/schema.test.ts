import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../paths.js';
import { schemaFiles } from './print-schema.js';

describe('schema/', () => {
  it('holds the current SDL of every subgraph and a supergraph that composes without errors', async () => {
    // composition errors throw inside schemaFiles()
    const expected = await schemaFiles();
    expect(Object.keys(expected).sort()).toEqual(['admin.graphql', 'content.graphql', 'health.graphql', 'supergraph.graphql']);
    for (const [file, text] of Object.entries(expected)) {
      const checkedIn = await readFile(path.join(projectRoot, 'schema', file), 'utf8').catch(() => '');
      expect(checkedIn, `schema/${file} is stale: run npm run schema`).toBe(text);
    }
  });
});
