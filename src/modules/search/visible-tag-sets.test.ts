import type { EntityManager } from '@mikro-orm/postgresql';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { changeEntryAcl, changeRootAcl, type AclEntry } from '../access/acl-operations.js';
import { permissions } from '../access/acl.js';
import { everyone, groupPrincipal, type Principal } from '../auth/principal.js';
import { createContent } from '../entries/contents.js';
import { deleteContent } from '../entries/deletion.js';
import { EntryTypeEnum } from '../entries/entry.types.js';
import { createFolder } from '../entries/folders.js';
import { addTags, removeTags } from '../entries/tags.js';
import { createRepository, repositoryIdOf } from '../repositories/operations.js';
import { checkIn, checkOut } from '../versions/operations.js';
import { searchByProperties } from './by-properties.js';
import { searchByCondition } from './by-condition.js';

/*
 * A caller who may not read the whole repository counts a tag-only search from the tag sets of its
 * readable ACLs (entry_visible_tag_set, Migration20261207170000EntryVisibleTagSets), not from its
 * matches. For random contents and folders, tags, ACLs and owners, deletions, working copies, new
 * versions and later changes of tags and ACLs (with or without a fold), the table equals a recount of
 * the entry rows, and every caller's count of random tag conditions equals the count that visits the
 * matches (the same condition with a term that is not about tags).
 */

let bench: OperationsBench;
const users = ['ann', 'bob', 'cat'] as const;
const admin = 'root';
type Caller = (typeof users)[number] | typeof admin;
const callers: Caller[] = [...users, admin];
const groups: Record<string, Caller[]> = { team: ['ann', 'bob'] };
const principals = [...users, groupPrincipal('team'), everyone];
const administrator: Principal = { userName: admin, roles: ['ADMIN'], groups: [] };
const tagPool = ['red', 'blue', 'green'];
let run = 0;

const em = () => bench.services.orm.em.fork() as EntityManager;

beforeAll(async () => {
  bench = await createOperationsBench();
  await bench.addUsers(users, groups);
});
afterAll(() => bench?.stop());

type Fate = 'kept' | 'deleted' | 'checkedOut' | 'newVersion';

interface EntrySpec {
  folder: boolean;
  owner: Caller;
  tags: string[];
  acl: { inherit: boolean; entries: AclEntry[] };
  fate: Fate;
  /** after the fates: tags added and removed, another ACL */
  added: string[];
  removed: string[];
  laterAcl: AclEntry[] | null;
}

const aclEntries = fc.uniqueArray(fc.record({ principal: fc.constantFrom(...principals), permission: fc.constantFrom(...permissions) }), {
  selector: (entry) => entry.principal,
  maxLength: 2,
});
const someTags = fc.array(fc.constantFrom(...tagPool), { maxLength: 3 });
const entrySpec: fc.Arbitrary<EntrySpec> = fc.record({
  folder: fc.constantFrom(false, false, false, true),
  owner: fc.constantFrom<Caller>(...callers),
  tags: someTags,
  acl: fc.record({ inherit: fc.boolean(), entries: aclEntries }),
  fate: fc.constantFrom<Fate>('kept', 'kept', 'deleted', 'checkedOut', 'newVersion'),
  added: someTags,
  removed: someTags,
  laterAcl: fc.option(aclEntries, { freq: 3 }),
});

/** A condition over tags only, without negation: what the tag sets answer. */
const tagTerm = fc.oneof(
  fc.constantFrom(...tagPool).map((tag) => `'${tag}' in tags`),
  fc.uniqueArray(fc.constantFrom(...tagPool), { minLength: 1, maxLength: 2 }).map((tags) => `tags in (${tags.map((t) => `'${t}'`).join(', ')})`),
);
const { condition: tagCondition } = fc.letrec<{ condition: string }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tagTerm,
    fc.tuple(tie('condition'), fc.constantFrom('and', 'or'), tie('condition')).map(([a, op, b]) => `(${a} ${op} ${b})`),
  ),
}));

const fixedConditions = ["'red' in tags", "'red' in tags or 'blue' in tags", "'red' in tags and 'blue' in tags", "tags in ('red', 'green') and 'blue' in tags"];

async function build(specs: EntrySpec[], repositoryName: string): Promise<void> {
  await createRepository(em(), bench.services.config, administrator, { name: repositoryName });
  // nobody but the owners and the entries' own ACLs: a user reads part of the repository
  await changeRootAcl(bench.services, em(), administrator, repositoryIdOf(repositoryName), { entries: [] });
  const asAdmin = () => bench.scopeOf(admin, ['ADMIN'], repositoryName);
  const ids: string[] = [];
  for (const [i, spec] of specs.entries()) {
    const scope = await asAdmin();
    const id = spec.folder
      ? (await createFolder(scope, { name: `folder-${i}`, tags: spec.tags })).id
      : (await createContent(scope, { uploadId: await bench.stage(scope, `text ${i}`), name: `doc-${i}.txt`, tags: spec.tags })).id;
    ids.push(id);
    await changeEntryAcl(await asAdmin(), id, spec.acl);
    if (spec.owner !== admin) await em().execute('update entry set owner = ? where chronical_id = (select chronical_id from entry where id = ?)', [spec.owner, id]);
  }
  for (const [i, spec] of specs.entries()) {
    if (spec.folder || spec.fate === 'kept') continue;
    if (spec.fate === 'deleted') await deleteContent(await asAdmin(), ids[i]!);
    else {
      // a checked-out content's tags change on its working copy (which searches do not show)
      const workingCopy = await checkOut(await asAdmin(), ids[i]!);
      ids[i] = spec.fate === 'newVersion' ? (await checkIn(await asAdmin(), workingCopy.id)).id : workingCopy.id;
    }
  }
  for (const [i, spec] of specs.entries()) {
    if (spec.folder || spec.fate === 'deleted') continue;
    if (spec.added.length > 0) await addTags(await asAdmin(), ids[i]!, spec.added);
    if (spec.removed.length > 0) await removeTags(await asAdmin(), ids[i]!, spec.removed);
  }
  for (const [i, spec] of specs.entries()) if (spec.laterAcl) await changeEntryAcl(await asAdmin(), ids[i]!, { inherit: false, entries: spec.laterAcl });
}

/** The tag sets kept for a repository (summed per key) and a recount of its visible tagged entries. */
async function keptAndRecounted(repositoryId: string): Promise<[string[], string[]]> {
  const rows = (sql: string) => em().execute<{ key: string }[]>(sql, [repositoryId]).then((list) => list.map((r) => r.key));
  return Promise.all([
    rows(`select acl_id || '|' || entry_type || '|' || tags::text || '|' || sum(n) as key from entry_visible_tag_set where repository_id = ?
           group by acl_id, entry_type, tags having sum(n) <> 0 order by 1`),
    rows(`select acl_id || '|' || entry_type || '|' || tags::text || '|' || count(*) as key from entry
           where repository_id = ? and is_latest and active and version_status is distinct from 'WORKING_COPY' and cardinality(tags) > 0
           group by acl_id, entry_type, tags order by 1`),
  ]);
}

describe('counts of tag-only searches from the tag sets of readable ACLs', () => {
  it('equal the counts that visit the matches, for random entries, changes and conditions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entrySpec, { maxLength: 12 }), fc.array(tagCondition, { minLength: 1, maxLength: 2 }), fc.boolean(), async (specs, conditions, fold) => {
        const repositoryName = `tag-sets-${++run}`;
        const repositoryId = repositoryIdOf(repositoryName);
        await build(specs, repositoryName);
        if (fold) await em().execute('select entry_visible_tag_set_fold(?)', [repositoryId]);
        const [kept, recounted] = await keptAndRecounted(repositoryId);
        expect(kept).toEqual(recounted);
        for (const caller of callers) {
          const scope = await bench.scopeOf(caller, caller === admin ? ['ADMIN'] : ['USER'], repositoryName);
          for (const condition of [...fixedConditions, ...conditions]) {
            for (const entryType of [undefined, EntryTypeEnum.CONTENT]) {
              // a page of none: counted by its statement; `name like '*'` makes it a visit of the matches
              const fast = (await searchByCondition(scope, condition, { limit: 0, entryType })).count;
              const visited = (await searchByCondition(scope, `(${condition}) and name like '*'`, { limit: 0, entryType })).count;
              expect({ caller, condition, entryType, count: fast }).toEqual({ caller, condition, entryType, count: visited });
            }
          }
          for (const tag of tagPool) {
            const fast = (await searchByProperties(scope, { tags: [tag, 'red'] }, { limit: 0 })).count;
            const visited = (await searchByCondition(scope, `'${tag}' in tags and 'red' in tags and name like '*'`, { limit: 0 })).count;
            expect({ caller, tags: [tag, 'red'], count: fast }).toEqual({ caller, tags: [tag, 'red'], count: visited });
          }
        }
      }),
      { numRuns: 20 },
    );
  }, 300_000);

  it('stay exact when contents are written and tagged while folds of the same ACLs run at once', async () => {
    const repositoryName = 'tag-sets-concurrent';
    const repositoryId = repositoryIdOf(repositoryName);
    await createRepository(em(), bench.services.config, administrator, { name: repositoryName });
    const scope = () => bench.scopeOf(admin, ['ADMIN'], repositoryName);
    const first = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => (await createContent(await scope(), { uploadId: await bench.stage(await scope(), `first ${i}`), name: `first-${i}.txt`, tags: [tagPool[i % 3]!] })).id),
    );
    // writers (each statement adds rows under the root ACL) beside folds that delete and re-add those rows
    const folds = Array.from({ length: 6 }, (_, i) =>
      em().execute(i % 2 === 0 ? 'select entry_visible_tag_set_fold(?)' : 'select entry_visible_count_fold(?)', [repositoryId]),
    );
    const writers = [
      ...Array.from({ length: 8 }, async (_, i) => {
        await createContent(await scope(), { uploadId: await bench.stage(await scope(), `second ${i}`), name: `second-${i}.txt`, tags: [tagPool[i % 3]!, 'shared'] });
      }),
      ...first.map(async (id, i) => addTags(await scope(), id, [tagPool[(i + 1) % 3]!])),
    ];
    await Promise.all([...folds, ...writers]);
    const [kept, recounted] = await keptAndRecounted(repositoryId);
    expect(kept).toEqual(recounted);
    expect(recounted).toHaveLength(6);
    const counts = await em().execute<{ kept: string; counted: string }[]>(
      `select (select sum(n) from entry_visible_count where repository_id = ?) as kept,
              (select count(*) from entry where repository_id = ? and is_latest and active and version_status is distinct from 'WORKING_COPY') as counted`,
      [repositoryId, repositoryId],
    );
    expect(counts[0]!.kept).toBe(counts[0]!.counted);
  });

  it('are read from the tag sets (a row taken out shows), plus what the caller owns under other ACLs', async () => {
    const repositoryName = `tag-sets-read`;
    const repositoryId = repositoryIdOf(repositoryName);
    await build(
      [
        { folder: false, owner: 'root', tags: ['red'], acl: { inherit: false, entries: [{ principal: 'cat', permission: 'read' }] }, fate: 'kept', added: [], removed: [], laterAcl: null },
        { folder: false, owner: 'root', tags: ['red', 'blue'], acl: { inherit: false, entries: [{ principal: 'cat', permission: 'read' }] }, fate: 'kept', added: [], removed: [], laterAcl: null },
        { folder: false, owner: 'cat', tags: ['red'], acl: { inherit: false, entries: [] }, fate: 'kept', added: [], removed: [], laterAcl: null },
        { folder: false, owner: 'root', tags: ['red'], acl: { inherit: false, entries: [] }, fate: 'kept', added: [], removed: [], laterAcl: null },
      ],
      repositoryName,
    );
    const countFor = async (condition: string) => (await searchByCondition(await bench.scopeOf('cat', ['USER'], repositoryName), condition, { limit: 0 })).count;
    expect(await countFor("'red' in tags")).toBe(3);
    expect(await countFor("'red' in tags and 'blue' in tags")).toBe(1);
    // never done by the service: the count follows the table
    await em().execute(`delete from entry_visible_tag_set where repository_id = ? and tags = '{red,blue}'`, [repositoryId]);
    expect(await countFor("'red' in tags")).toBe(2);
    expect(await countFor("'red' in tags and name like '*'")).toBe(3);
  });
});
