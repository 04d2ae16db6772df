import type { EntityManager } from '@mikro-orm/postgresql';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { changeEntryAcl, changeRootAcl, type AclEntry } from '../access/acl-operations.js';
import { everyone, groupPrincipal, type Principal } from '../auth/principal.js';
import { createContent } from '../entries/contents.js';
import { deleteContent } from '../entries/deletion.js';
import { EntryTypeEnum } from '../entries/entry.types.js';
import { createFolder } from '../entries/folders.js';
import { createRepository } from '../repositories/operations.js';
import { checkOut } from '../versions/operations.js';
import { searchByCondition } from './by-condition.js';
import { searchByProperties } from './by-properties.js';
import { deepPaging } from './entry-query.js';

/*
 * A deep page in file-size order for a caller who may not read the whole repository is read from its
 * readable ACLs' streams (`deepPageIds`), or by the walk when the streams cannot tell it exactly. For
 * random contents (sizes with ties), folders (no size), ACLs, owners, deletions and working copies,
 * every caller's page at every offset, with and without `entryType`, equals the page the walk gives
 * (the same search with a term that is not its own: `name like '*'`), and so does its count. The
 * streams are taken whatever they cost (`deepPaging.descentTuples`), and read with little slack in
 * some runs, so that short streams fall back to the walk.
 */

let bench: OperationsBench;
const users = ['ann', 'bob', 'cat'] as const;
const admin = 'root';
type Caller = (typeof users)[number] | typeof admin;
const groups: Record<string, Caller[]> = { team: ['ann', 'bob'] };
// keepers: users nobody searches as, for ACLs of their own (many ACLs, most unreadable to a caller)
const keepers = ['keeper1', 'keeper2', 'keeper3'];
const principals = [...users, groupPrincipal('team'), everyone, ...keepers];
const administrator: Principal = { userName: admin, roles: ['ADMIN'], groups: [] };
const defaults = { ...deepPaging };
let run = 0;

const em = () => bench.services.orm.em.fork() as EntityManager;

beforeAll(async () => {
  bench = await createOperationsBench();
  await bench.addUsers([...users, ...keepers], groups);
});
afterAll(() => bench?.stop());
afterEach(() => Object.assign(deepPaging, defaults));

interface EntrySpec {
  folder: boolean;
  size: number;
  owner: Caller;
  acl: AclEntry[];
  fate: 'kept' | 'deleted' | 'checkedOut';
}

const entrySpec: fc.Arbitrary<EntrySpec> = fc.record({
  folder: fc.constantFrom(false, false, false, false, true),
  // few sizes: ties ordered by id
  size: fc.integer({ min: 1, max: 6 }),
  owner: fc.constantFrom<Caller>(admin, admin, admin, ...users),
  acl: fc.uniqueArray(fc.record({ principal: fc.constantFrom(...principals), permission: fc.constant('read' as const) }), { selector: (e) => e.principal, maxLength: 2 }),
  fate: fc.constantFrom('kept', 'kept', 'kept', 'kept', 'deleted', 'checkedOut'),
});

async function build(specs: EntrySpec[], repositoryName: string): Promise<void> {
  await createRepository(em(), bench.services.config, administrator, { name: repositoryName });
  const asAdmin = () => bench.scopeOf(admin, ['ADMIN'], repositoryName);
  await changeRootAcl(bench.services, em(), administrator, (await asAdmin()).repository.id, { entries: [] });
  for (const [i, spec] of specs.entries()) {
    const scope = await asAdmin();
    const id = spec.folder
      ? (await createFolder(scope, { name: `folder-${i}` })).id
      : (await createContent(scope, { uploadId: await bench.stage(scope, 'x'.repeat(spec.size)), name: `doc-${i}.txt` })).id;
    await changeEntryAcl(await asAdmin(), id, { inherit: false, entries: spec.acl });
    if (spec.owner !== admin) await em().execute('update entry set owner = ? where chronical_id = (select chronical_id from entry where id = ?)', [spec.owner, id]);
    if (spec.fate === 'deleted' && !spec.folder) await deleteContent(await asAdmin(), id);
    if (spec.fate === 'checkedOut' && !spec.folder) await checkOut(await asAdmin(), id);
  }
}

describe('a deep page in file-size order from the readable ACLs', () => {
  it('equals the walk, for random entries, callers and offsets', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entrySpec, { minLength: 1, maxLength: 24 }), fc.constantFrom(5, 0, 1), fc.integer({ min: 1, max: 4 }), async (specs, slack, limit) => {
        const repositoryName = `deep-pages-${++run}`;
        await build(specs, repositoryName);
        Object.assign(deepPaging, { slack, descentTuples: -1e9 });
        for (const caller of users) {
          const scope = await bench.scopeOf(caller, ['USER'], repositoryName);
          for (const entryType of [undefined, EntryTypeEnum.CONTENT]) {
            for (let offset = 1; offset <= specs.length + 1; offset++) {
              const options = { orderBy: 'resource.fileSize', offset, limit, entryType };
              const deep = await searchByProperties(scope, {}, options);
              const walked = await searchByCondition(scope, "name like '*'", options);
              const page = (p: typeof deep) => ({ caller, entryType, offset, ids: p.entries.map((e) => e.id), count: p.count });
              expect(page(deep)).toEqual(page(walked));
            }
          }
        }
      }),
      { numRuns: 15 },
    );
  }, 300_000);
});
