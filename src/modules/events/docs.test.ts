import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../paths.js';
import { eventTypeDescriptions } from './event-types.js';

// docs/events.md is kept with the declared set: every type, as event-types.ts describes it, and no other.
describe('docs/events.md', () => {
  it('lists every event type of event-types.ts with its description, and no other', async () => {
    const text = await fs.readFile(path.join(projectRoot, 'docs/events.md'), 'utf8');
    const section = text.slice(text.indexOf('## Event types'), text.indexOf('## Payload'));
    const documented = Object.fromEntries([...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map(([, type, description]) => [type, description!.trim()]));
    expect(documented).toEqual(eventTypeDescriptions);
  });
});
