import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, type OperationsBench } from '../../../test/helpers/operations.js';
import { createContent, contentForDownload } from '../entries/contents.js';
import { deleteContent, restoreContent } from '../entries/deletion.js';
import type { EntryScope } from '../entries/scope.js';
import { addTags } from '../entries/tags.js';
import { updateContent } from '../entries/update.js';
import { cancelCheckOut, checkIn, checkOut, lock, replaceResource, unlock } from '../versions/operations.js';
import { checkState, type EntryFacts } from './policy.js';

/*
 * The object-level rules, as operations on a real database (no HTTP): who may do what to an entry in
 * which state, and whether the answer is a 404 or a 409. The HTTP tests of entries and versions keep
 * checking the same rules as clients see them.
 */

let bench: OperationsBench;
let alice: EntryScope;
let bob: EntryScope;
let admin: EntryScope;
beforeAll(async () => {
  bench = await createOperationsBench();
  [alice, bob, admin] = await Promise.all([bench.scopeOf('alice'), bench.scopeOf('bob'), bench.scopeOf('root', ['ADMIN'])]);
});
afterAll(() => bench?.stop());

let counter = 0;
const newContent = async (scope: EntryScope = alice) => createContent(scope, { uploadId: await bench.stage(scope), name: `policy-${++counter}.txt` });
const reason = (promise: Promise<unknown>) =>
  promise.then(
    () => 'allowed',
    (error: { reasonCode?: string; message: string }) => error.reasonCode ?? error.message,
  );

describe('checkState', () => {
  const entry: EntryFacts = { id: 'e1', name: 'doc.txt', active: true, owner: 'alice', lockedBy: null, isLatest: true, version: '1.0', createdBy: 'alice' };
  const alicePrincipal = { userName: 'alice', roles: ['USER' as const], groups: [] };
  const bobPrincipal = { userName: 'bob', roles: ['USER' as const], groups: [] };

  it('decides by state: another user\'s lock and earlier versions are 409s, deactivated downloads 404s', () => {
    expect(() => checkState(bobPrincipal, 'update', { entry })).not.toThrow();
    expect(() => checkState(bobPrincipal, 'update', { entry: { ...entry, lockedBy: 'alice' } })).toThrow(expect.objectContaining({ status: 409 }));
    expect(() => checkState(alicePrincipal, 'update', { entry: { ...entry, lockedBy: 'alice' } })).not.toThrow();
    expect(() => checkState(alicePrincipal, 'tag', { entry: { ...entry, isLatest: false } })).toThrow(/earlier version/);
    expect(() => checkState(alicePrincipal, 'download', { entry: { ...entry, active: false } })).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => checkState(alicePrincipal, 'download', { entry: { ...entry, active: false } }, { includeInactive: true })).not.toThrow();
    expect(() => checkState(bobPrincipal, 'download', { entry: { ...entry, active: false } }, { includeInactive: true })).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('a working copy: only its holder checks in; the holder or an administrator cancels', () => {
    const workingCopy = { ...entry, id: 'wc', lockedBy: 'alice' };
    const latest = { ...entry, lockedBy: 'alice' };
    const admin = { userName: 'root', roles: ['ADMIN' as const], groups: [] };
    expect(() => checkState(alicePrincipal, 'checkIn', { entry: latest, latest, workingCopy })).not.toThrow();
    expect(() => checkState(admin, 'checkIn', { entry: latest, latest, workingCopy })).toThrow(/checked out by alice/);
    expect(() => checkState(admin, 'cancelCheckOut', { entry: latest, latest, workingCopy })).not.toThrow();
    expect(() => checkState(bobPrincipal, 'cancelCheckOut', { entry: latest, latest, workingCopy })).toThrow(/checked out by alice/);
    expect(() => checkState(alicePrincipal, 'replaceResource', { entry: latest, latest, workingCopy })).toThrow(/checked out by you/);
    expect(() => checkState(alicePrincipal, 'checkOut', { entry: latest, latest, workingCopy })).toThrow(/already checked out/);
    // the latest version is read-only while checked out, for its holder too; the working copy changes
    expect(() => checkState(alicePrincipal, 'update', { entry: latest, latest, workingCopy })).toThrow(/change its working copy 'wc'/);
    expect(() => checkState(alicePrincipal, 'tag', { entry: latest, latest, workingCopy })).toThrow(/change its working copy 'wc'/);
    expect(() => checkState(alicePrincipal, 'update', { entry: workingCopy, latest, workingCopy })).not.toThrow();
    expect(() => checkState(alicePrincipal, 'tag', { entry: workingCopy, latest, workingCopy })).not.toThrow();
  });
});

describe('operations ask the policy', () => {
  it('a lock of alice: bob may neither update, tag, replace, lock, unlock nor delete (409); copy and her own verbs pass', async () => {
    const content = await newContent();
    await lock(alice, content.id);
    const uploadId = await bench.stage(bob);
    const refusals = [
      await reason(updateContent(bob, content.id, { name: 'taken-over.txt' })),
      await reason(addTags(bob, content.id, ['mine'])),
      await reason(replaceResource(bob, content.id, { uploadId })),
      await reason(lock(bob, content.id)),
      await reason(unlock(bob, content.id)),
      await reason(deleteContent(bob, content.id)),
    ];
    expect(refusals).toEqual(Array(6).fill('conflict'));
    expect(await reason(addTags(alice, content.id, ['hers']))).toBe('allowed');
    expect(await reason(unlock(admin, content.id))).toBe('allowed');
    expect(await reason(updateContent(bob, content.id, { typeName: 'free' }))).toBe('allowed');
  });

  it('check-out, check-in and cancel follow the holder rules', async () => {
    const content = await newContent();
    const workingCopy = await checkOut(alice, content.id);
    expect(await reason(checkOut(bob, content.id))).toBe('conflict');
    expect(await reason(checkIn(bob, workingCopy.id))).toBe('conflict');
    expect(await reason(checkIn(admin, workingCopy.id))).toBe('conflict');
    expect(await reason(cancelCheckOut(bob, content.id))).toBe('conflict');
    expect(await reason(unlock(alice, content.id))).toBe('conflict');
    expect(await reason(cancelCheckOut(admin, content.id))).toBe('allowed');
    expect(await reason(checkIn(alice, content.id))).toBe('conflict');
  });

  it('a deactivated content: read-only for versioning, downloadable by its owner and administrators when asked', async () => {
    const content = await newContent();
    await deleteContent(alice, content.id);
    expect(await reason(checkOut(alice, content.id))).toBe('conflict');
    expect(await reason(lock(alice, content.id))).toBe('conflict');
    expect(await reason(contentForDownload(alice, content.id))).toBe('notFound');
    expect(await reason(contentForDownload(bob, content.id, { includeInactive: true }))).toBe('notFound');
    expect(await reason(contentForDownload(alice, content.id, { includeInactive: true }))).toBe('allowed');
    expect(await reason(contentForDownload(admin, content.id, { includeInactive: true }))).toBe('allowed');
    await restoreContent(alice, content.id);
    expect(await reason(contentForDownload(bob, content.id))).toBe('allowed');
  });
});
