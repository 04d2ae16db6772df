import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, createOperationsBench, failure, type OperationsBench } from '../../../test/helpers/operations.js';
import { changeEntryAcl, changeRootAcl } from '../access/acl-operations.js';
import { addMember, createGroup, deleteGroup, removeMember } from '../auth/groups.js';
import { authenticate, createUser, deleteUser } from '../auth/operations.js';
import { cancelJob, startImageConversion } from '../conversion/operations.js';
import { createContent } from '../entries/contents.js';
import { copyContent } from '../entries/copy.js';
import { deleteContent, deleteFolder, restoreContent } from '../entries/deletion.js';
import { createFolder } from '../entries/folders.js';
import type { EntryScope } from '../entries/scope.js';
import { addTags, removeTags } from '../entries/tags.js';
import { updateContent, updateFolder } from '../entries/update.js';
import { assignPolicy, createInheritancePolicy, deletePolicies } from '../policies/operations.js';
import { createRepository, deleteRepository, updateRepositoryLimits } from '../repositories/operations.js';
import { cancelCheckOut, checkIn, checkOut, lock, replaceResource, unlock } from '../versions/operations.js';
import { eventTypes, type EventType } from './event-types.js';

// Every changing verb writes its one event, in its own transaction, after its checks (DESIGN §11).
let bench: OperationsBench;
let alice: () => Promise<EntryScope>;
const em = () => bench.services.orm.em.fork() as EntityManager;

interface EventRow {
  id: string;
  type: EventType;
  repository: string | null;
  entry_id: string | null;
  chronical_id: string | null;
  actor: string | null;
  details: Record<string, unknown>;
}
/** The newest event id: what a step wrote is what lies after it. */
const lastId = async () => (await em().execute<{ id: string | null }[]>('select max(id)::text as id from event'))[0]!.id ?? '0';
const eventsAfter = (id: string) => em().execute<EventRow[]>('select id::text, type, repository, entry_id, chronical_id, actor, details from event where id > ? order by id', [id]);
/** The events `step` wrote, in order. */
async function written(step: () => Promise<unknown>): Promise<EventRow[]> {
  const before = await lastId();
  await step();
  return eventsAfter(before);
}
const seen = new Set<EventType>();
/** The one event `step` wrote (of `type`), with its fields. */
async function oneEvent(type: EventType, step: () => Promise<unknown>): Promise<EventRow> {
  const events = await written(step);
  expect(events.map((event) => event.type)).toEqual([type]);
  seen.add(type);
  return events[0]!;
}
/** `step` fails (or does nothing) and writes no event. */
async function noEvent(step: () => Promise<unknown>): Promise<void> {
  expect(await written(() => step().catch(() => undefined))).toEqual([]);
}

beforeAll(async () => {
  bench = await createOperationsBench();
  for (const userName of ['alice', 'bob']) await createUser(em(), bench.services, administrator, { userName, password: `${userName}-password`, roles: [] });
  alice = () => bench.scopeOf('alice');
});
afterAll(() => bench?.stop());

describe('entry events', () => {
  it('created, updated, moved, tagged, deleted, restored, purged: entry, chronicle, actor and details', async () => {
    const scope = await alice();
    let folderId = '';
    const created = await oneEvent('ENTRY_CREATED', async () => (folderId = (await createFolder(scope, { name: 'events-folder' })).id));
    expect(created).toMatchObject({ repository: 'default', entry_id: folderId, chronical_id: folderId, actor: 'alice', details: { entryType: 'FOLDER', name: 'events-folder', parentId: null } });
    const other = await createFolder(await alice(), { name: 'events-other' });

    let contentId = '';
    const upload = await bench.stage(scope, 'first bytes', 'a.txt');
    const createdContent = await oneEvent('ENTRY_CREATED', async () => (contentId = (await createContent(await alice(), { uploadId: upload, parentId: folderId })).id));
    expect(createdContent).toMatchObject({ entry_id: contentId, chronical_id: contentId, actor: 'alice', details: { entryType: 'CONTENT', name: 'a.txt', parentId: folderId } });

    const copied = await oneEvent('ENTRY_CREATED', () => copyContent(scope, contentId, { name: 'copy.txt' }));
    expect(copied).toMatchObject({ actor: 'alice', details: { entryType: 'CONTENT', name: 'copy.txt', copiedFrom: contentId } });
    expect(copied.entry_id).not.toBe(contentId);

    expect(await oneEvent('ENTRY_UPDATED', () => updateContent(scope, contentId, { name: 'b.txt', properties: { p: 1 } }))).toMatchObject({
      entry_id: contentId,
      details: { changed: ['name', 'properties'] },
    });
    expect(await oneEvent('ENTRY_MOVED', () => updateContent(scope, contentId, { parentId: other.id, name: 'c.txt' }))).toMatchObject({
      entry_id: contentId,
      details: { fromFolderId: folderId, toFolderId: other.id, changed: ['name', 'parentId'] },
    });
    expect(await oneEvent('ENTRY_MOVED', () => updateFolder(scope, folderId, { parentId: other.id }))).toMatchObject({ entry_id: folderId, details: { fromFolderId: null, toFolderId: other.id } });
    expect(await oneEvent('ENTRY_UPDATED', () => updateFolder(scope, folderId, { tags: ['t'] }))).toMatchObject({ entry_id: folderId, details: { changed: ['tags'] } });
    // a PATCH that changes nothing writes nothing
    await noEvent(() => updateContent(scope, contentId, {}));

    expect(await oneEvent('ENTRY_TAGGED', () => addTags(scope, contentId, ['x', 'y']))).toMatchObject({ entry_id: contentId, details: { added: ['x', 'y'], removed: [] } });
    expect(await oneEvent('ENTRY_TAGGED', () => removeTags(scope, contentId, ['x', 'absent']))).toMatchObject({ details: { added: [], removed: ['x'] } });
    await noEvent(() => removeTags(scope, contentId, ['absent']));

    expect(await oneEvent('ENTRY_DELETED', () => deleteContent(scope, contentId))).toMatchObject({ entry_id: contentId, chronical_id: contentId, actor: 'alice' });
    // deactivating a deactivated content, restoring an active one: no-ops, no events
    await noEvent(() => deleteContent(scope, contentId));
    expect(await oneEvent('ENTRY_RESTORED', () => restoreContent(scope, contentId))).toMatchObject({ entry_id: contentId, actor: 'alice' });
    await noEvent(() => restoreContent(scope, contentId));
    expect(await oneEvent('ENTRY_PURGED', () => deleteContent(scope, contentId, { permanent: true }))).toMatchObject({
      entry_id: contentId,
      details: { entryType: 'CONTENT', name: 'c.txt', versions: 1 },
    });
    // the folder `other` holds `events-folder` (with the copy) : one event for the subtree
    expect(await oneEvent('ENTRY_PURGED', () => deleteFolder(scope, other.id, { recursive: true }))).toMatchObject({
      entry_id: other.id,
      details: { entryType: 'FOLDER', folders: 1, contents: 1 },
    });
  });

  it('versions: checked out, checked in, cancelled (both ways), locked, unlocked, new bytes', async () => {
    const scope = await alice();
    const content = await createContent(scope, { uploadId: await bench.stage(scope, 'v1', 'versioned.txt') });
    let workingCopyId = '';
    const out = await oneEvent('CONTENT_CHECKED_OUT', async () => (workingCopyId = (await checkOut(scope, content.id)).id));
    expect(out).toMatchObject({ entry_id: workingCopyId, chronical_id: content.chronicalId, actor: 'alice', details: { version: '1.0' } });
    expect(await oneEvent('CONTENT_CHECKED_IN', () => checkIn(scope, workingCopyId, { major: false }))).toMatchObject({
      entry_id: workingCopyId,
      chronical_id: content.chronicalId,
      details: { version: '1.1', newBytes: false },
    });
    const second = (await checkOut(scope, content.id)).id;
    expect(await oneEvent('CONTENT_CHECK_OUT_CANCELLED', () => cancelCheckOut(scope, second))).toMatchObject({ entry_id: second, chronical_id: content.chronicalId });
    const third = (await checkOut(scope, content.id)).id;
    // deleting a working copy cancels the check-out
    expect(await oneEvent('CONTENT_CHECK_OUT_CANCELLED', () => deleteContent(scope, third))).toMatchObject({ entry_id: third });

    expect(await oneEvent('ENTRY_LOCKED', () => lock(scope, content.id))).toMatchObject({ entry_id: content.id, actor: 'alice' });
    await noEvent(() => lock(scope, content.id));
    // bob may not unlock alice's lock: refused, no event
    await noEvent(async () => unlock(await bench.scopeOf('bob'), content.id));
    expect(await oneEvent('ENTRY_UNLOCKED', () => unlock(scope, content.id))).toMatchObject({ entry_id: content.id });
    await noEvent(() => unlock(scope, content.id));

    const replaced = await oneEvent('ENTRY_UPDATED', async () => replaceResource(scope, content.id, { uploadId: await bench.stage(scope, 'v2') }));
    expect(replaced).toMatchObject({ chronical_id: content.chronicalId, details: { changed: ['resource'], version: '1.2' } });
  });

  it('ACL changed, of an entry and of the repository root (with the administrator as actor)', async () => {
    const scope = await alice();
    const folder = await createFolder(scope, { name: 'acl-events' });
    expect(await oneEvent('ACL_CHANGED', () => changeEntryAcl(scope, folder.id, { entries: [{ principal: 'bob', permission: 'read' }] }))).toMatchObject({
      entry_id: folder.id,
      actor: 'alice',
      details: { entries: [{ principal: 'bob', permission: 'read' }], inherit: null },
    });
    // a malformed ACL is refused before any write
    expect(await failure(changeEntryAcl(scope, folder.id, { entries: [{ principal: 'bob', permission: 'bogus' }] }))).toMatchObject({ reasonCode: 'illegalArguments' });
    await noEvent(() => changeEntryAcl(scope, folder.id, { entries: [{ principal: 'bob', permission: 'bogus' }] }));
    const root = await oneEvent('ACL_CHANGED', () =>
      changeRootAcl(bench.services, em(), administrator, 'svc.repository.default', { entries: [{ principal: 'EVERYONE', permission: 'all' }] }),
    );
    expect(root).toMatchObject({ repository: 'default', entry_id: null, actor: 'admin', details: { root: true } });
  });

  it('a change refused by its checks, or rolled back by a clash, leaves no event', async () => {
    const scope = await alice();
    await createFolder(scope, { name: 'taken' });
    // the name clash is found by the unique index, after the insert: the event rolls back with it
    expect(await failure(createFolder(await alice(), { name: 'taken' }))).toMatchObject({ reasonCode: 'conflict' });
    await noEvent(async () => createFolder(await alice(), { name: 'taken' }));
    await noEvent(async () => createContent(await alice(), { uploadId: await bench.stage(scope, 'x', 'taken') }));
    await noEvent(() => restoreContent(scope, 'no-such-content'));
  });
});

describe('job events', () => {
  it('a conversion job recorded pending and cancelled: its client, its source content, its state', async () => {
    const scope = await alice();
    const content = await createContent(scope, { uploadId: await bench.stage(scope, 'not an image', 'pic.txt') });
    let jobId = '';
    const pending = await oneEvent('JOB_STATE_CHANGED', async () => {
      jobId = (await startImageConversion(scope, { contentId: content.id, targetFormat: 'png', resultAction: 'CONTENT_REPRESENTATION' })).id;
    });
    expect(pending).toMatchObject({ repository: 'default', entry_id: content.id, chronical_id: content.chronicalId, actor: 'alice', details: { jobId, state: 'pending' } });
    expect(await oneEvent('JOB_STATE_CHANGED', () => cancelJob(scope, jobId))).toMatchObject({ details: { jobId, state: 'cancelled' } });
    // an ended job cannot be cancelled: no change, no event
    await noEvent(() => cancelJob(scope, jobId));
  });
});

describe('administration events', () => {
  it('repository created, updated, deleted', async () => {
    const created = await oneEvent('REPOSITORY_CREATED', () => createRepository(em(), bench.services.config, administrator, { name: 'evented' }));
    expect(created).toMatchObject({ repository: 'evented', actor: 'admin', entry_id: null });
    expect(await oneEvent('REPOSITORY_UPDATED', () => updateRepositoryLimits(bench.services, em(), administrator, 'svc.repository.evented', { fullTextEnabled: false }))).toMatchObject({
      repository: 'evented',
      details: { fullTextEnabled: false },
    });
    await noEvent(() => createRepository(em(), bench.services.config, administrator, { name: 'EVENTED' }));
    expect(await oneEvent('REPOSITORY_DELETED', () => deleteRepository(bench.services, em(), administrator, 'svc.repository.evented'))).toMatchObject({ repository: 'evented' });
  });

  it('policy created, assigned, unassigned, deleted', async () => {
    const folder = await createFolder(await alice(), { name: 'policed' });
    let policyId = '';
    const created = await oneEvent('POLICY_CREATED', async () => (policyId = (await createInheritancePolicy(em(), administrator, { name: 'events-inherit' })).id));
    expect(created).toMatchObject({ actor: 'admin', details: { policyId, technicalName: 'events-inherit', kind: 'INHERITANCE' } });
    const assignment = { policyId, repositoryId: 'svc.repository.default', folderId: folder.id };
    expect(await oneEvent('POLICY_ASSIGNED', () => assignPolicy(em(), administrator, assignment, true))).toMatchObject({ repository: 'default', entry_id: folder.id, details: { policyId } });
    // assigned already: nothing changes
    await noEvent(() => assignPolicy(em(), administrator, assignment, true));
    expect(await oneEvent('POLICY_UNASSIGNED', () => assignPolicy(em(), administrator, assignment, false))).toMatchObject({ entry_id: folder.id });
    await noEvent(() => assignPolicy(em(), administrator, assignment, false));
    expect(await oneEvent('POLICY_DELETED', () => deletePolicies(em(), administrator, { ids: [policyId] }))).toMatchObject({ details: { policyId } });
    await noEvent(() => deletePolicies(em(), administrator, { ids: [policyId] }));
  });

  it('user and group created, member added and removed, group and user deleted', async () => {
    expect(await oneEvent('USER_CREATED', () => createUser(em(), bench.services, administrator, { userName: 'carol', password: 'carol-password', roles: [] }))).toMatchObject({
      actor: 'admin',
      details: { userName: 'carol', roles: ['USER'] },
    });
    await noEvent(() => createUser(em(), bench.services, administrator, { userName: 'CAROL', password: 'carol-password', roles: [] }));
    expect(await oneEvent('GROUP_CREATED', () => createGroup(em(), administrator, { name: 'auditors' }))).toMatchObject({ details: { group: 'auditors' } });
    expect(await oneEvent('GROUP_MEMBER_ADDED', () => addMember(em(), bench.services, administrator, { name: 'auditors', userName: 'carol' }))).toMatchObject({
      details: { group: 'auditors', userName: 'carol' },
    });
    await noEvent(() => addMember(em(), bench.services, administrator, { name: 'auditors', userName: 'carol' }));
    expect(await oneEvent('GROUP_MEMBER_REMOVED', () => removeMember(em(), bench.services, administrator, { name: 'auditors', userName: 'carol' }))).toMatchObject({
      details: { group: 'auditors', userName: 'carol' },
    });
    await noEvent(() => removeMember(em(), bench.services, administrator, { name: 'auditors', userName: 'carol' }));
    expect(await oneEvent('GROUP_DELETED', () => deleteGroup(em(), bench.services, administrator, { name: 'auditors' }))).toMatchObject({ details: { group: 'auditors' } });
    expect(await oneEvent('USER_DELETED', () => deleteUser(em(), bench.services, administrator, 'carol'))).toMatchObject({ actor: 'admin', details: { userName: 'carol' } });
    await noEvent(() => deleteUser(em(), bench.services, administrator, 'carol'));
  });

  it('login succeeded; login failed is kept although the login is refused', async () => {
    const login = (password: string) => authenticate(em(), bench.services, { user: 'bob', password, address: '192.0.2.7' });
    expect(await oneEvent('LOGIN_SUCCEEDED', () => login('bob-password'))).toMatchObject({ actor: 'bob', details: { address: '192.0.2.7' } });
    const refused = await written(async () => expect(await failure(login('wrong-password'))).toMatchObject({ reasonCode: 'notAuthenticated' }));
    expect(refused).toMatchObject([{ type: 'LOGIN_FAILED', actor: 'bob', details: { address: '192.0.2.7', reason: 'wrongCredentials' } }]);
    seen.add('LOGIN_FAILED');
    // an empty password is a malformed request, not a login attempt
    await noEvent(() => login(''));
  });
});

describe('the declared set', () => {
  it('every declared event type was written by its verb above', () => {
    expect(eventTypes.filter((type) => !seen.has(type))).toEqual([]);
  });
});
