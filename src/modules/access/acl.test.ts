import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, createOperationsBench, failure, type OperationsBench } from '../../../test/helpers/operations.js';
import { contentForDownload, createContent, getContent } from '../entries/contents.js';
import { copyContent } from '../entries/copy.js';
import { deleteContent, deleteFolder, restoreContent } from '../entries/deletion.js';
import type { Entry } from '../entries/entry.entity.js';
import { createFolder, getFolder } from '../entries/folders.js';
import type { EntryScope } from '../entries/scope.js';
import { addTags } from '../entries/tags.js';
import { updateContent, updateFolder } from '../entries/update.js';
import { startImageConversion } from '../conversion/operations.js';
import { assignPolicy, createInheritancePolicy } from '../policies/operations.js';
import { children, home, searchByProperties } from '../search/by-properties.js';
import { searchByCondition } from '../search/by-condition.js';
import { searchByText } from '../search/by-text.js';
import { cancelCheckOut, checkOut, lock, replaceResource, unlock, versions } from '../versions/operations.js';
import { changeEntryAcl, changeRootAcl, entryAcl, entryPermissions, rootAcl } from './acl-operations.js';

/*
 * The access rules of DESIGN §10 as operations on a real database: every verb against each kind of
 * caller (no permission, read, write, all, the owner, an administrator), inheritance and where it
 * stops, searches and their counts, moves, and principals that go.
 */

let bench: OperationsBench;
const users = ['nobody', 'reader', 'writer', 'manager', 'owner', 'other'] as const;
type Caller = (typeof users)[number] | 'admin';
const scopes = {} as Record<Caller, EntryScope>;
let folder: Entry;
let counter = 0;

const adminScope = () => bench.scopeOf('root', ['ADMIN']);
const em = () => bench.services.orm.em.fork() as EntityManager;
const outcome = (promise: Promise<unknown>) => failure(promise).then((f) => f?.reasonCode ?? 'allowed');

async function refreshScopes() {
  for (const user of users) scopes[user] = await bench.scopeOf(user);
  scopes.admin = await adminScope();
}

beforeAll(async () => {
  bench = await createOperationsBench();
  await bench.addUsers(users);
  // the root is narrowed: only what an ACL below grants is visible
  await changeRootAcl(bench.services, em(), administrator, 'svc.repository.default', { entries: [] });
  await refreshScopes();
  folder = await createFolder(scopes.admin, { name: 'team' });
  await changeEntryAcl(scopes.admin, folder.id, {
    entries: [
      { principal: 'reader', permission: 'read' },
      { principal: 'writer', permission: 'write' },
      { principal: 'manager', permission: 'all' },
      { principal: 'owner', permission: 'write' },
    ],
  });
});
afterAll(() => bench?.stop());

const newContent = async (parentId = folder.id, name = `doc-${++counter}.txt`) =>
  createContent(scopes.owner, { uploadId: await bench.stage(scopes.owner, `text of ${name}`), name, parentId });

/** The level each caller holds on a content the owner made in the team folder. */
const levels: Record<Caller, number> = { nobody: 0, other: 0, reader: 1, writer: 2, manager: 3, owner: 3, admin: 3 };

/** Each verb with the level it needs and how it is done to a fresh content. */
const verbs: { verb: string; level: number; run: (scope: EntryScope, content: Entry) => Promise<unknown> }[] = [
  { verb: 'get', level: 1, run: (s, c) => getContent(s, c.id) },
  { verb: 'download', level: 1, run: (s, c) => contentForDownload(s, c.id) },
  { verb: 'versions', level: 1, run: (s, c) => versions(s, c.id) },
  { verb: 'acl', level: 1, run: (s, c) => entryAcl(s, c.id) },
  { verb: 'copy', level: 1, run: (s, c) => copyContent(s, c.id, { name: `copy-${++counter}.txt`, parentId: folder.id }) },
  { verb: 'update', level: 2, run: (s, c) => updateContent(s, c.id, { name: `renamed-${++counter}.txt` }) },
  { verb: 'tag', level: 2, run: (s, c) => addTags(s, c.id, ['x']) },
  { verb: 'lock', level: 2, run: (s, c) => lock(s, c.id) },
  { verb: 'checkOut', level: 2, run: (s, c) => checkOut(s, c.id) },
  { verb: 'replaceResource', level: 2, run: async (s, c) => replaceResource(s, c.id, { uploadId: await bench.stage(s) }) },
  { verb: 'delete', level: 3, run: (s, c) => deleteContent(s, c.id) },
  { verb: 'purge', level: 3, run: (s, c) => deleteContent(s, c.id, { permanent: true }) },
  { verb: 'changeAcl', level: 3, run: (s, c) => changeEntryAcl(s, c.id, { entries: [{ principal: 'other', permission: 'read' }] }) },
];

describe('the permission matrix on a content (each verb × none/read/write/all/owner/administrator)', () => {
  it('allows what the level allows; 404 without read, 403 accessDenied with read but not enough', async () => {
    const seen: string[] = [];
    const expected: string[] = [];
    for (const caller of ['nobody', 'reader', 'writer', 'manager', 'owner', 'admin'] as Caller[]) {
      for (const { verb, level, run } of verbs) {
        const content = await newContent();
        // copying into the team folder also needs write there
        const needed = verb === 'copy' ? Math.max(level, 2) : level;
        const want = levels[caller] >= needed ? 'allowed' : levels[caller] === 0 ? 'notFound' : 'accessDenied';
        seen.push(`${caller} ${verb}: ${await outcome(run(scopes[caller], content))}`);
        expected.push(`${caller} ${verb}: ${want}`);
      }
    }
    expect(seen).toEqual(expected);
  });

  it('restore and unlock: all and write, as the verbs they undo', async () => {
    for (const caller of ['reader', 'writer', 'manager'] as Caller[]) {
      const deleted = await newContent();
      await deleteContent(scopes.owner, deleted.id);
      expect(await outcome(restoreContent(scopes[caller], deleted.id))).toBe(levels[caller] >= 3 ? 'allowed' : 'accessDenied');
      const locked = await newContent();
      await lock(scopes.owner, locked.id);
      // another user's lock is a 409 for whoever may write; a 403 for whoever may not
      expect(await outcome(unlock(scopes[caller], locked.id))).toBe(levels[caller] >= 2 ? 'conflict' : 'accessDenied');
      const checkedOut = await newContent();
      await checkOut(scopes.owner, checkedOut.id);
      expect(await outcome(cancelCheckOut(scopes[caller], checkedOut.id))).toBe(levels[caller] >= 2 ? 'conflict' : 'accessDenied');
    }
  });

  it('conversion: page images kept on the content need write on it; new contents need read on it and write on their folder', async () => {
    const content = await newContent();
    const convert = (caller: Caller, resultAction: 'NEW_CONTENT' | 'CONTENT_REPRESENTATION', parentId?: string) =>
      outcome(startImageConversion(scopes[caller], { contentId: content.id, resultAction, targetFormat: 'png', newContentSpecification: parentId ? { parentId } : null }));
    const readable = await createFolder(scopes.admin, { name: `readable-${++counter}`, parentId: folder.id });
    const writable = await createFolder(scopes.admin, { name: `writable-${counter}` });
    await changeEntryAcl(scopes.admin, writable.id, { entries: [{ principal: 'reader', permission: 'write' }] });
    expect([
      await convert('nobody', 'CONTENT_REPRESENTATION'),
      await convert('reader', 'CONTENT_REPRESENTATION'),
      await convert('reader', 'NEW_CONTENT', readable.id),
      await convert('reader', 'NEW_CONTENT', writable.id),
      await convert('writer', 'CONTENT_REPRESENTATION'),
    ]).toEqual(['notFound', 'accessDenied', 'accessDenied', 'allowed', 'allowed']);
  });

  it('permissions: the caller\'s permission and the verbs it allows', async () => {
    const content = await newContent();
    expect(await entryPermissions(scopes.reader, content.id)).toEqual({ permission: 'read', actions: ['read', 'download', 'copy'] });
    expect((await entryPermissions(scopes.writer, content.id)).actions).toContain('checkOut');
    expect((await entryPermissions(scopes.writer, content.id)).actions).not.toContain('delete');
    expect((await entryPermissions(scopes.owner, content.id)).permission).toBe('all');
    expect(await outcome(entryPermissions(scopes.nobody, content.id))).toBe('notFound');
  });
});

describe('folders', () => {
  it('creating, moving and copying into a folder need write on it; at the root, on the root ACL', async () => {
    expect(await outcome(createFolder(scopes.reader, { name: 'r-sub', parentId: folder.id }))).toBe('accessDenied');
    expect(await outcome(createFolder(scopes.nobody, { name: 'n-sub', parentId: folder.id }))).toBe('notFound');
    expect(await outcome(createFolder(scopes.writer, { name: `w-sub-${++counter}`, parentId: folder.id }))).toBe('allowed');
    // the root's ACL is empty: only administrators create there
    expect(await outcome(createFolder(scopes.writer, { name: 'top' }))).toBe('accessDenied');
    const content = await newContent();
    expect(await outcome(updateContent(scopes.writer, content.id, { parentId: null }))).toBe('accessDenied');
  });

  it('a folder: lookups and children are 404 without read; rename needs write, deletion all', async () => {
    const sub = await createFolder(scopes.admin, { name: `sub-${++counter}`, parentId: folder.id });
    expect(await outcome(getFolder(scopes.nobody, sub.id))).toBe('notFound');
    expect(await outcome(getFolder(scopes.reader, sub.id))).toBe('allowed');
    expect(await outcome(updateFolder(scopes.reader, sub.id, { name: 'no' }))).toBe('accessDenied');
    expect(await outcome(updateFolder(scopes.writer, sub.id, { name: `yes-${++counter}` }))).toBe('allowed');
    expect(await outcome(deleteFolder(scopes.writer, sub.id))).toBe('accessDenied');
    expect(await outcome(deleteFolder(scopes.manager, sub.id))).toBe('allowed');
  });
});

describe('inheritance', () => {
  it('an entry gets its folder\'s ACL plus its own; inherit: false keeps only its own; the view says where each comes from', async () => {
    const sub = await createFolder(scopes.admin, { name: `inh-${++counter}`, parentId: folder.id });
    const content = await createContent(scopes.admin, { uploadId: await bench.stage(scopes.admin), name: 'inherited.txt', parentId: sub.id });
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('allowed');
    await changeEntryAcl(scopes.admin, sub.id, { inherit: false, entries: [{ principal: 'other', permission: 'read' }] });
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('notFound');
    expect(await outcome(getContent(scopes.other, content.id))).toBe('allowed');
    const view = await entryAcl(scopes.admin, content.id);
    expect(view).toEqual({ inherit: true, entries: [], effective: [{ principal: 'other', permission: 'read', inheritedFrom: sub.id }] });
    await changeEntryAcl(scopes.admin, sub.id, { inherit: true, entries: [] });
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('allowed');
    expect(await outcome(getContent(scopes.other, content.id))).toBe('notFound');
  });

  it('an inheritance policy with inheritAcl: false stops the folder\'s ACL at its children', async () => {
    const sub = await createFolder(scopes.admin, { name: `stop-${++counter}`, parentId: folder.id });
    const content = await createContent(scopes.admin, { uploadId: await bench.stage(scopes.admin), name: 'below.txt', parentId: sub.id });
    const policy = await createInheritancePolicy(em(), scopes.admin.principal, { name: `no-acl-${counter}`, inheritAcl: false });
    await assignPolicy(em(), administrator, { policyId: policy.id, repositoryId: 'svc.repository.default', folderId: sub.id }, true);
    expect(await outcome(getFolder(scopes.reader, sub.id))).toBe('allowed');
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('notFound');
    // a content created below it later too
    const later = await createContent(scopes.admin, { uploadId: await bench.stage(scopes.admin), name: 'later.txt', parentId: sub.id });
    expect(await outcome(getContent(scopes.reader, later.id))).toBe('notFound');
    await assignPolicy(em(), administrator, { policyId: policy.id, repositoryId: 'svc.repository.default', folderId: sub.id }, false);
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('allowed');
    expect(await outcome(getContent(scopes.reader, later.id))).toBe('allowed');
  });

  it('a moved folder takes its new place\'s ACL, with everything below it', async () => {
    const secret = await createFolder(scopes.admin, { name: `secret-${++counter}` });
    const moved = await createFolder(scopes.admin, { name: `moved-${counter}`, parentId: folder.id });
    const deep = await createFolder(scopes.admin, { name: 'deep', parentId: moved.id });
    const content = await createContent(scopes.admin, { uploadId: await bench.stage(scopes.admin), name: 'deep.txt', parentId: deep.id });
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('allowed');
    await updateFolder(scopes.admin, moved.id, { parentId: secret.id });
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('notFound');
    await updateFolder(scopes.admin, moved.id, { parentId: folder.id });
    expect(await outcome(getContent(scopes.reader, content.id))).toBe('allowed');
  });

  it('new versions keep their content\'s ACL', async () => {
    const content = await newContent();
    await changeEntryAcl(scopes.owner, content.id, { inherit: false, entries: [{ principal: 'other', permission: 'write' }] });
    const workingCopy = await checkOut(scopes.other, content.id);
    expect(await outcome(getContent(scopes.reader, workingCopy.id))).toBe('notFound');
    expect(await outcome(getContent(scopes.other, workingCopy.id))).toBe('allowed');
    expect((await versions(scopes.other, content.id)).count).toBe(1);
  });
});

describe('searches filter by the read rule in their SQL, counts too', () => {
  it('property, condition, dot path, full text, children and home answer only what the caller may read', async () => {
    const open = await createFolder(scopes.admin, { name: `open-${++counter}`, parentId: folder.id });
    const closed = await createFolder(scopes.admin, { name: `closed-${counter}`, parentId: folder.id });
    await changeEntryAcl(scopes.admin, closed.id, { inherit: false, entries: [] });
    const tag = `marker${counter}`;
    for (const parent of [open, open, closed]) {
      const made = await createContent(scopes.admin, { uploadId: await bench.stage(scopes.admin, `quasarword ${tag}`), name: `${tag}-${++counter}.txt`, parentId: parent.id, tags: [tag] });
      expect(made.id).toBeTruthy();
    }
    // the owner rule: the closed folder is the reader's own content's folder? no: an entry it owns there
    await createContent(scopes.admin, { uploadId: await bench.stage(scopes.admin), name: `${tag}-owned.txt`, parentId: closed.id, tags: [tag] });
    await em().execute(`update entry set owner = 'reader' where name = ?`, [`${tag}-owned.txt`]);
    const counts = async (scope: EntryScope) => ({
      byProperties: (await searchByProperties(scope, { tags: [tag] }, {})).count,
      byCondition: (await searchByCondition(scope, `'${tag}' in tags`, {})).count,
      dotPath: (await searchByCondition(scope, `parent.name = '${closed.name}'`, {})).count,
      openChildren: (await failure(children(scope, open.id, {}))) ?? (await children(scope, open.id, {})).count,
    });
    expect(await counts(scopes.admin)).toEqual({ byProperties: 4, byCondition: 4, dotPath: 2, openChildren: 2 });
    // the reader may read the open folder's two, and owns one in the closed folder (whose parent it may not read: the dot path matches nothing)
    expect(await counts(scopes.reader)).toEqual({ byProperties: 3, byCondition: 3, dotPath: 0, openChildren: 2 });
    expect(await counts(scopes.nobody)).toEqual({ byProperties: 0, byCondition: 0, dotPath: 0, openChildren: expect.objectContaining({ reasonCode: 'notFound' }) });
    // the children of a folder the caller may not read: not there
    expect(await outcome(children(scopes.reader, closed.id, {}))).toBe('notFound');
    // the name holds the tag: full text finds all four names
    expect((await searchByText(scopes.admin, tag, {})).count).toBe(4);
    expect((await searchByText(scopes.reader, tag, {})).count).toBe(3);
    expect((await searchByCondition(scopes.reader, `fullText('${tag}') and name like '${tag}*'`, {})).count).toBe(3);
    expect((await searchByCondition(scopes.nobody, `fullText('${tag}')`, {})).count).toBe(0);
    // at the root: the team folder (its own ACL names the reader), nothing for a caller named nowhere
    expect((await home(scopes.reader, {})).entries.map((e) => e.name)).toEqual(['team']);
    expect((await home(scopes.nobody, {})).count).toBe(0);
  });
});

describe('the ACL verbs', () => {
  it('400 for an unknown user, group, permission or a principal named twice; names are stored as registered', async () => {
    const content = await newContent();
    const set = (entries: unknown) => failure(changeEntryAcl(scopes.owner, content.id, { entries }));
    expect(await set([{ principal: 'ghost', permission: 'read' }])).toEqual({ reasonCode: 'illegalArguments', message: expect.stringContaining("no user 'ghost'") });
    expect(await set([{ principal: 'group:ghosts', permission: 'read' }])).toEqual({ reasonCode: 'illegalArguments', message: expect.stringContaining("no group 'ghosts'") });
    expect(await set([{ principal: 'reader', permission: 'own' }])).toMatchObject({ reasonCode: 'illegalArguments', message: expect.stringContaining('entries.0.permission') });
    expect(await set([{ principal: 'reader', permission: 'read' }, { principal: 'READER', permission: 'all' }])).toMatchObject({ message: expect.stringContaining('named twice') });
    expect(await failure(changeEntryAcl(scopes.owner, content.id, { entries: [], extra: 1 }))).toMatchObject({ reasonCode: 'illegalArguments' });
    const view = await changeEntryAcl(scopes.owner, content.id, { entries: [{ principal: 'Other', permission: 'read' }, { principal: 'everyone', permission: 'read' }] });
    expect(view.entries).toEqual([
      { principal: 'EVERYONE', permission: 'read' },
      { principal: 'other', permission: 'read' },
    ]);
    expect(await outcome(getContent(scopes.nobody, content.id))).toBe('allowed');
  });

  it('a deleted user leaves every ACL', async () => {
    await em().execute(`insert into app_user (user_name, password_hash, roles) values ('leaver', 'unused', '{USER}')`);
    const content = await newContent();
    await changeEntryAcl(scopes.owner, content.id, { entries: [{ principal: 'leaver', permission: 'all' }] });
    await changeRootAcl(bench.services, em(), administrator, 'svc.repository.default', { entries: [{ principal: 'leaver', permission: 'read' }] });
    await em().execute(`delete from app_user where user_name = 'leaver'`);
    expect((await entryAcl(scopes.owner, content.id)).entries).toEqual([]);
    expect((await rootAcl(bench.services, em(), 'svc.repository.default')).entries).toEqual([]);
    const [row] = await em().execute<{ n: string }[]>(`select count(*) as n from entry e join acl a on a.id = e.acl_id where a.entries -> 'leaver' is not null`);
    expect(Number(row!.n)).toBe(0);
  });
});
