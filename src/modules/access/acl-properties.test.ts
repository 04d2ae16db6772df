import type { EntityManager } from '@mikro-orm/postgresql';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, failure, type OperationsBench } from '../../../test/helpers/operations.js';
import type { Principal } from '../auth/principal.js';
import { createContent, getContent } from '../entries/contents.js';
import { EntryTypeEnum } from '../entries/entry.types.js';
import { createFolder, getFolder } from '../entries/folders.js';
import { updateFolder } from '../entries/update.js';
import { assignPolicy, createInheritancePolicy } from '../policies/operations.js';
import { createRepository, repositoryIdOf } from '../repositories/operations.js';
import { children, home, searchByProperties } from '../search/by-properties.js';
import { searchByCondition } from '../search/by-condition.js';
import { searchByText } from '../search/by-text.js';
import type { EntriesPage } from '../search/entry-query.js';
import { changeEntryAcl, changeRootAcl, type AclEntry } from './acl-operations.js';
import { everyone, groupPrincipal } from '../auth/principal.js';
import { levelOf, permissions } from './acl.js';

/*
 * Issue 23 item 7: for random folder trees, ACLs (users, groups, EVERYONE), owners, tags, inheritance stops
 * and moves, every search, lookup and listing answers each caller exactly the entries a brute-force
 * evaluation of DESIGN §10 allows. The model below knows nothing of the implementation: it walks the
 * final tree.
 */

let bench: OperationsBench;
const users = ['ann', 'bob', 'cat', 'dan'] as const;
const admin = 'root';
type Caller = (typeof users)[number] | typeof admin;
const callers: Caller[] = [...users, admin];
/** Groups and their members (dan is in none). */
const groups: Record<string, Caller[]> = { team: ['ann', 'bob'], ops: ['bob', 'cat'] };
const principals = [...users, ...Object.keys(groups).map(groupPrincipal), everyone];
const administrator: Principal = { userName: admin, roles: ['ADMIN'], groups: [] };
let stopPolicyId: string;
let run = 0;

const em = () => bench.services.orm.em.fork() as EntityManager;

beforeAll(async () => {
  bench = await createOperationsBench();
  await bench.addUsers(users, groups);
  // the folder's tags are not handed down (the model's tags are each entry's own)
  stopPolicyId = (await createInheritancePolicy(em(), administrator, { name: 'acl-stop', inheritAcl: false, inheritTags: false })).id;
});
afterAll(() => bench?.stop());

/** An entry's own ACL as set through the API. */
interface OwnAcl {
  inherit: boolean;
  entries: AclEntry[];
}

/** A folder or a content: where it is (a folder's index, null: the root), who owns it, its own ACL, its tags. */
interface EntrySpec {
  parent: number | null;
  owner: Caller;
  acl: OwnAcl;
  tags: string[];
}

/** A content also says whether it is created after every ACL, policy and move (the insert trigger's case) or before them. */
interface ContentSpec extends EntrySpec {
  late: boolean;
}

/** The changes after the tree is built, in the order made: the folders' ACLs, the root ACL, the inheritance stop, the move. */
type Step = 'folderAcls' | 'rootAcl' | 'stop' | 'move';
const steps: Step[] = ['folderAcls', 'rootAcl', 'stop', 'move'];

interface Scenario {
  folders: EntrySpec[];
  contents: ContentSpec[];
  order: Step[];
  rootAcl: AclEntry[];
  /** the folder the inheritance policy with inheritAcl: false is assigned to */
  stopAt: number | null;
  /** a folder moved (to a folder's index or the root); one into its own subtree is refused and changes nothing */
  move: { folder: number; to: number | null } | null;
}

const maxFolders = 8;
const maxDepth = 4;

const aclEntries = fc.uniqueArray(
  fc.record({ principal: fc.constantFrom(...principals), permission: fc.constantFrom(...permissions) }),
  { selector: (entry) => entry.principal, maxLength: 3 },
);
const ownAcl: fc.Arbitrary<OwnAcl> = fc.record({ inherit: fc.boolean(), entries: aclEntries });
const owner = fc.constantFrom<Caller>(...callers);
/** Tags the searches below ask for: their counts are read from entry_visible_tag for an administrator, from the entry rows for a user. */
const tags = fc.subarray(['red', 'blue']);

/** Folder i's parent is a folder before it (so the tree has no cycle), no deeper than maxDepth levels. */
function placeFolders(choices: (number | null)[]): (number | null)[] {
  const parents: (number | null)[] = [];
  const depths: number[] = [];
  choices.forEach((choice, i) => {
    const eligible = depths.map((depth, j) => (depth < maxDepth ? j : -1)).filter((j) => j >= 0);
    const parent = choice === null || eligible.length === 0 ? null : eligible[choice % eligible.length]!;
    parents.push(parent);
    depths.push(parent === null ? 1 : depths[parent]! + 1);
  });
  return parents;
}

const at = (choice: number | null, folderCount: number) => (choice === null || folderCount === 0 ? null : choice % folderCount);

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    folderChoices: fc.array(fc.record({ parent: fc.option(fc.nat(), { freq: 3 }), owner, acl: ownAcl, tags }), { maxLength: maxFolders }),
    contents: fc.array(fc.record({ parent: fc.option(fc.nat(), { freq: 4 }), owner, acl: ownAcl, late: fc.boolean(), tags }), { maxLength: 15 }),
    order: fc.shuffledSubarray(steps, { minLength: steps.length }),
    rootAcl: aclEntries,
    stopAt: fc.option(fc.nat(), { freq: 2 }),
    move: fc.option(fc.record({ folder: fc.nat(), to: fc.option(fc.nat(), { freq: 3 }) }), { freq: 2 }),
  })
  .map(({ folderChoices, contents, order, rootAcl, stopAt, move }) => {
    const parents = placeFolders(folderChoices.map((f) => f.parent));
    const count = folderChoices.length;
    return {
      folders: folderChoices.map((f, i) => ({ ...f, parent: parents[i]! })),
      contents: contents.map((c) => ({ ...c, parent: at(c.parent, count) })),
      order,
      rootAcl,
      stopAt: at(stopAt, count),
      move: move && count > 0 ? { folder: move.folder % count, to: at(move.to, count) } : null,
    };
  });

// ---- the model: DESIGN §10 evaluated by brute force over the final tree ----

type Levels = Map<string, number>;

/** An entry where it ends up (after the move); its key is `f<i>` for folder i, `c<i>` for content i. */
interface ModelEntry {
  key: string;
  name: string;
  parent: string | null;
  owner: Caller;
  acl: OwnAcl;
  tags: string[];
}

/** Whether folder `folder` lies in the subtree of folder `root` (itself included), in `parents`. */
function inSubtree(parents: (number | null)[], folder: number | null, root: number): boolean {
  for (let f = folder; f !== null; f = parents[f]!) if (f === root) return true;
  return false;
}

/** Whether the scenario's move would put a folder into itself or below itself (refused: a 409). */
const moveMakesCycle = (s: Scenario) => s.move !== null && s.move.to !== null && inSubtree(s.folders.map((f) => f.parent), s.move.to, s.move.folder);

/** The folders' parents after the move. */
function finalParents(s: Scenario): (number | null)[] {
  const parents = s.folders.map((f) => f.parent);
  if (s.move && !moveMakesCycle(s)) parents[s.move.folder] = s.move.to;
  return parents;
}

function modelOf(s: Scenario): ModelEntry[] {
  const parents = finalParents(s);
  const folderKey = (i: number | null) => (i === null ? null : `f${i}`);
  return [
    ...s.folders.map((f, i) => ({ key: `f${i}`, name: `folder-${i}-omega`, parent: folderKey(parents[i]!), owner: f.owner, acl: f.acl, tags: f.tags })),
    ...s.contents.map((c, i) => ({ key: `c${i}`, name: `doc-${i}-omega.txt`, parent: folderKey(c.parent), owner: c.owner, acl: c.acl, tags: c.tags })),
  ];
}

const levelsOf = (entries: AclEntry[]): Levels => new Map(entries.map((e) => [e.principal, levelOf(e.permission)]));

function merged(a: Levels, b: Levels): Levels {
  const result = new Map(a);
  for (const [principal, level] of b) result.set(principal, Math.max(result.get(principal) ?? 0, level));
  return result;
}

/** The effective ACL of each entry: its own entries, and while it inherits, what its folder hands down (nothing past the stop). */
function effectiveAcls(s: Scenario, entries: ModelEntry[]): Map<string, Levels> {
  const byKey = new Map(entries.map((e) => [e.key, e]));
  const effective = new Map<string, Levels>();
  const stop = s.stopAt === null ? null : `f${s.stopAt}`;
  const of = (key: string): Levels => {
    const known = effective.get(key);
    if (known) return known;
    const entry = byKey.get(key)!;
    const own = levelsOf(entry.acl.entries);
    let levels = own;
    if (entry.acl.inherit) {
      const inherited = entry.parent === null ? levelsOf(s.rootAcl) : entry.parent === stop ? new Map() : of(entry.parent);
      levels = merged(inherited, own);
    }
    effective.set(key, levels);
    return levels;
  };
  for (const entry of entries) of(entry.key);
  return effective;
}

/** Whether `caller` may read the entry: administrators and the owner always; otherwise read or more for its name, one of its groups or EVERYONE. */
function mayRead(caller: Caller, entry: ModelEntry, levels: Levels): boolean {
  if (caller === admin || entry.owner === caller) return true;
  const its = [caller, ...Object.keys(groups).filter((name) => groups[name]!.includes(caller)).map(groupPrincipal), everyone];
  return Math.max(...its.map((principal) => levels.get(principal) ?? 0)) >= 1;
}

// ---- building the scenario through the operations ----

interface Built {
  repositoryName: string;
  /** entry id by model key and back */
  idOf: Map<string, string>;
  keyOf: Map<string, string>;
}

async function build(s: Scenario): Promise<Built> {
  const repositoryName = `acl-prop-${++run}`;
  await createRepository(em(), bench.services.config, administrator, { name: repositoryName });
  const repositoryId = repositoryIdOf(repositoryName);
  const asAdmin = () => bench.scopeOf(admin, ['ADMIN'], repositoryName);
  const idOf = new Map<string, string>();
  const folderIds: string[] = [];
  for (const [i, folder] of s.folders.entries()) {
    const parentId = folder.parent === null ? undefined : folderIds[folder.parent];
    folderIds.push((await createFolder(await asAdmin(), { name: `folder-${i}-omega`, parentId, tags: folder.tags })).id);
    idOf.set(`f${i}`, folderIds[i]!);
  }
  const addContents = async (late: boolean) => {
    for (const [i, content] of s.contents.entries()) {
      if (content.late !== late) continue;
      const scope = await asAdmin();
      const parentId = content.parent === null ? undefined : folderIds[content.parent];
      const created = await createContent(scope, { uploadId: await bench.stage(scope, `text of content ${i}`), name: `doc-${i}-omega.txt`, parentId, tags: content.tags });
      idOf.set(`c${i}`, created.id);
      await changeEntryAcl(await asAdmin(), created.id, content.acl);
    }
  };
  await addContents(false);
  const stepsMade: Record<Step, () => Promise<unknown>> = {
    folderAcls: async () => {
      for (const [i, folder] of s.folders.entries()) await changeEntryAcl(await asAdmin(), folderIds[i]!, folder.acl);
    },
    rootAcl: () => changeRootAcl(bench.services, em(), administrator, repositoryId, { entries: s.rootAcl }),
    stop: async () => {
      if (s.stopAt !== null) await assignPolicy(em(), administrator, { policyId: stopPolicyId, repositoryId, folderId: folderIds[s.stopAt]! }, true);
    },
    move: async () => {
      if (!s.move) return;
      const move = updateFolder(await asAdmin(), folderIds[s.move.folder]!, { parentId: s.move.to === null ? null : folderIds[s.move.to]! });
      // a move into itself or below itself is refused (409) and changes nothing
      if (moveMakesCycle(s)) expect(await failure(move)).toMatchObject({ reasonCode: 'conflict' });
      else await move;
    },
  };
  for (const step of s.order) await stepsMade[step]();
  await addContents(true);
  const owned = [...s.folders.map((f, i) => [`f${i}`, f.owner] as const), ...s.contents.map((c, i) => [`c${i}`, c.owner] as const)];
  for (const [key, user] of owned) if (user !== admin) await em().execute('update entry set owner = ? where id = ?', [user, idOf.get(key)]);
  return { repositoryName, idOf, keyOf: new Map([...idOf].map(([key, id]) => [id, key])) };
}

// ---- what each caller is answered, against what the model allows ----

const outcome = (promise: Promise<unknown>) => failure(promise).then((f) => f?.reasonCode ?? 'allowed');

/** What the checks compare: keys of entries, sorted, and counts. */
type Answers = Record<string, string[] | number | string>;

async function answersOf(caller: Caller, built: Built, entries: ModelEntry[]): Promise<Answers> {
  // one unit of work for all the caller's questions, as one request has (its readable ACLs computed once)
  const scope = await bench.scopeOf(caller, caller === admin ? ['ADMIN'] : ['USER'], built.repositoryName);
  const keys = (page: EntriesPage) => page.entries.map((e) => built.keyOf.get(e.id) ?? `unknown ${e.id}`).sort();
  const answers: Answers = {};
  const all = await searchByProperties(scope, {}, { limit: 1000 });
  answers.byProperties = keys(all);
  answers.byPropertiesCount = all.count;
  // the count of a short page comes from its own statement, not from the page
  answers.byPropertiesPageOfOneCount = (await searchByProperties(scope, {}, { limit: 1 })).count;
  answers.contentsCount = (await searchByProperties(scope, {}, { limit: 0, entryType: EntryTypeEnum.CONTENT })).count;
  const condition = await searchByCondition(scope, "name like '*'", { limit: 1000 });
  answers.byCondition = keys(condition);
  answers.byConditionCount = condition.count;
  const text = await searchByText(scope, 'omega', { limit: 1000 });
  answers.byText = keys(text);
  answers.byTextCount = text.count;
  answers.fullTextAndName = keys(await searchByCondition(scope, "fullText('omega') and name like 'doc-*'", { limit: 1000 }));
  answers.home = keys(await home(scope, { limit: 1000 }));
  // tag-only searches, counted (a page of none)
  answers.redOrBlue = keys(await searchByCondition(scope, "'red' in tags or 'blue' in tags", { limit: 1000 }));
  answers.redOrBlueCount = (await searchByCondition(scope, "'red' in tags or 'blue' in tags", { limit: 0 })).count;
  answers.redAndBlueCount = (await searchByCondition(scope, "'red' in tags and 'blue' in tags", { limit: 0 })).count;
  answers.redContentsCount = (await searchByCondition(scope, "'red' in tags", { limit: 0, entryType: EntryTypeEnum.CONTENT })).count;
  answers.blueByPropertiesCount = (await searchByProperties(scope, { tags: ['blue'] }, { limit: 0 })).count;
  for (const entry of entries) {
    const id = built.idOf.get(entry.key)!;
    const folder = entry.key.startsWith('f');
    answers[`get ${entry.key}`] = await outcome(folder ? getFolder(scope, id) : getContent(scope, id));
    if (!folder) continue;
    answers[`children ${entry.key}`] = await children(scope, id, { limit: 1000 }).then(keys, (error: { reasonCode: string }) => error.reasonCode);
    answers[`parent.name of ${entry.key}`] = keys(await searchByCondition(scope, `parent.name = '${entry.name}'`, { limit: 1000 }));
  }
  return answers;
}

function expectedOf(caller: Caller, s: Scenario, entries: ModelEntry[]): Answers {
  const effective = effectiveAcls(s, entries);
  const readable = entries.filter((e) => mayRead(caller, e, effective.get(e.key)!));
  const readableKeys = new Set(readable.map((e) => e.key));
  const keys = (list: ModelEntry[]) => list.map((e) => e.key).sort();
  const everything = keys(readable);
  const answers: Answers = {
    byProperties: everything,
    byPropertiesCount: readable.length,
    byPropertiesPageOfOneCount: readable.length,
    contentsCount: readable.filter((e) => e.key.startsWith('c')).length,
    byCondition: everything,
    byConditionCount: readable.length,
    byText: everything,
    byTextCount: readable.length,
    fullTextAndName: keys(readable.filter((e) => e.key.startsWith('c'))),
    home: keys(readable.filter((e) => e.parent === null)),
    redOrBlue: keys(readable.filter((e) => e.tags.length > 0)),
    redOrBlueCount: readable.filter((e) => e.tags.length > 0).length,
    redAndBlueCount: readable.filter((e) => e.tags.length === 2).length,
    redContentsCount: readable.filter((e) => e.key.startsWith('c') && e.tags.includes('red')).length,
    blueByPropertiesCount: readable.filter((e) => e.tags.includes('blue')).length,
  };
  for (const entry of entries) {
    answers[`get ${entry.key}`] = readableKeys.has(entry.key) ? 'allowed' : 'notFound';
    if (!entry.key.startsWith('f')) continue;
    const inside = keys(readable.filter((e) => e.parent === entry.key));
    answers[`children ${entry.key}`] = readableKeys.has(entry.key) ? inside : 'notFound';
    // a joined parent the caller may not read matches nothing
    answers[`parent.name of ${entry.key}`] = readableKeys.has(entry.key) ? inside : [];
  }
  return answers;
}

describe('property: every search and lookup answers exactly what the rules allow', () => {
  it('for random trees, ACLs, owners, inheritance stops and moves', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const built = await build(s);
        const entries = modelOf(s);
        for (const caller of callers) {
          expect({ caller, ...(await answersOf(caller, built, entries)) }).toEqual({ caller, ...expectedOf(caller, s, entries) });
        }
      }),
      { numRuns: 40 },
    );
  }, 300_000);
});

describe('the readable ACLs a process remembers', () => {
  /** Resolves once a statement of this database waits for a row lock. */
  async function someoneWaitsForALock() {
    for (let tries = 0; tries < 600; tries++) {
      const [row] = await em().execute<{ n: string }[]>(
        `select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      if (Number(row!.n) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('no statement waited for a lock within 30 s');
  }

  it('follow an ACL committed after one with a higher id (ids are handed out before commit, not in commit order)', async () => {
    const repositoryName = `acl-commit-order`;
    await createRepository(em(), bench.services.config, administrator, { name: repositoryName });
    const repositoryId = repositoryIdOf(repositoryName);
    const asAdmin = () => bench.scopeOf(admin, ['ADMIN'], repositoryName);
    const readers = async () => (await searchByProperties(await bench.scopeOf('cat', ['USER'], repositoryName), {}, { limit: 1000 })).entries.map((e) => e.name).sort();
    const adminScope = await asAdmin();
    const narrowed = await createContent(adminScope, { uploadId: await bench.stage(adminScope), name: 'narrowed.txt' });
    const open = await createContent(adminScope, { uploadId: await bench.stage(adminScope), name: 'open.txt' });
    await changeEntryAcl(await asAdmin(), open.id, { inherit: false, entries: [{ principal: everyone, permission: 'read' }] });
    expect(await readers()).toEqual(['narrowed.txt', 'open.txt']);

    // the root ACL narrows to bob: its transaction makes the new ACL, then waits on the row of 'narrowed.txt' held here
    let release!: () => void;
    let held!: () => void;
    const rowHeld = new Promise<void>((resolve) => (held = resolve));
    const holder = em().transactional(async (tx) => {
      await tx.execute('select 1 from entry where id = ? for update', [narrowed.id]);
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await rowHeld;
    const narrowing = changeRootAcl(bench.services, em(), administrator, repositoryId, { entries: [{ principal: 'bob', permission: 'all' }] });
    await someoneWaitsForALock();
    // meanwhile another ACL, with a higher id, is made and committed; cat may read every committed ACL
    await changeEntryAcl(await asAdmin(), open.id, { inherit: false, entries: [{ principal: everyone, permission: 'write' }] });
    expect(await readers()).toEqual(['narrowed.txt', 'open.txt']);
    release();
    await holder;
    await narrowing;
    // the narrowed content is bob's alone now, in searches as in lookups
    expect(await outcome(getContent(await bench.scopeOf('cat', ['USER'], repositoryName), narrowed.id))).toBe('notFound');
    expect(await readers()).toEqual(['open.txt']);
  });
});
