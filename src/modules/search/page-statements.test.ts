import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { createContent } from '../entries/contents.js';
import { createFolder } from '../entries/folders.js';
import { searchByProperties } from './by-properties.js';
import { searchByText } from './by-text.js';
import { buildEntryQuery, pageOf, runPage, runSearchStatements, withReadableAcls } from './entry-query.js';

/*
 * A search page's entries are read by one prepared statement (pageOf) on the search's own connection:
 * planned once per connection, and answering the same when the tables under it change.
 */

let bench: OperationsBench;
const em = () => bench.services.orm.em.fork() as EntityManager;
const contents = ['lantern-one.txt', 'lantern-three.txt', 'lantern-two.txt'];
const everything = ['lantern-one.txt', 'lantern-three.txt', 'lantern-two.txt', 'papers'];
const names = (page: { entries: { name: string }[] }) => page.entries.map((entry) => entry.name);

beforeAll(async () => {
  bench = await createOperationsBench();
  await bench.addUsers(['ann']);
  const admin = await bench.scopeOf('root', ['ADMIN']);
  const folder = await createFolder(admin, { name: 'papers' });
  const ann = await bench.scopeOf('ann');
  for (const name of contents) await createContent(ann, { name, parentId: folder.id, uploadId: await bench.stage(ann, `text of ${name}`, name) });
});
afterAll(() => bench?.stop());

describe('the page fetch', () => {
  it('runs prepared on the search\'s connection, and its pages stay the same after `entry` and `resource` change', async () => {
    const scope = await withReadableAcls(await bench.scopeOf('ann'));
    const query = buildEntryQuery(scope, [], { orderBy: 'name' });
    let prepared: string[] = [];
    const page = await runSearchStatements(scope, async (run) => {
      const rows = await runPage(scope, run, query.page);
      prepared = (await run<{ statement: string }>({ sql: 'select statement from pg_prepared_statements', params: [] })).map((row) => row.statement);
      return { rows, count: rows.length };
    });
    expect(prepared).toContain(pageOf(scope, []).sql);
    expect(names(page)).toEqual(everything);

    // past the executions after which Postgres may keep a generic plan, by property and by text
    const byName = async () => names(await searchByProperties(await bench.scopeOf('ann'), {}, { orderBy: 'name' }));
    const byText = async () => names(await searchByText(await bench.scopeOf('ann'), 'lantern', {})).sort();
    for (let i = 0; i < 8; i++) {
      expect(await byName()).toEqual(everything);
      expect(await byText()).toEqual(contents);
    }
    // the tables the prepared statement reads change (as a migration changes them): its plans are made again
    await em().execute('alter table entry add column scratch_column integer');
    await em().execute('alter table resource add column scratch_column text');
    expect(await byName()).toEqual(everything);
    expect(await byText()).toEqual(contents);
    await em().execute('alter table entry drop column scratch_column');
    await em().execute('alter table resource drop column scratch_column');
    expect(await byName()).toEqual(everything);
  });
});
