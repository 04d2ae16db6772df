import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperationsBench, failure, type OperationsBench } from '../../../test/helpers/operations.js';
import type { Principal } from '../auth/principal.js';
import { createContent } from '../entries/contents.js';
import { copyContent } from '../entries/copy.js';
import { Entry } from '../entries/entry.entity.js';
import { createFolder } from '../entries/folders.js';
import type { EntryScope } from '../entries/scope.js';
import { updateContent, updateFolder } from '../entries/update.js';
import { assignPolicy, createInheritancePolicy } from './operations.js';

/*
 * Inheritance policies as operations on a real database (no HTTP): what a folder hands down to the
 * entries created in it. inheritance.test.ts checks the same over REST.
 */

let bench: OperationsBench;
let alice: EntryScope;
const administrator: Principal = { userName: 'root', roles: ['ADMIN'], groups: [] };
beforeAll(async () => {
  bench = await createOperationsBench();
  alice = await bench.scopeOf('alice');
});
afterAll(() => bench?.stop());

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;
const upload = async (fields: { parentId?: string; tags?: string[]; properties?: Record<string, unknown> } = {}) =>
  createContent(alice, { uploadId: await bench.stage(alice), name: `${unique('content')}.txt`, ...fields });
async function policyOn(folderId: string, flags: { inheritTags?: boolean; inheritCommonProperties?: boolean; inheritPolicies?: boolean } = {}): Promise<void> {
  const policy = await createInheritancePolicy(alice.em, administrator, { name: unique('inheritance'), ...flags });
  await assignPolicy(alice.em, administrator, { policyId: policy.id, repositoryId: alice.repository.id, folderId }, true);
}

describe('inheritance of tags and common properties', () => {
  it('no policy: a folder keeps its tags and properties to itself', async () => {
    const folder = await createFolder(alice, { name: unique('plain'), tags: ['t'], properties: { p: 1 } });
    expect(folder).toMatchObject({ tags: ['t'], properties: { p: 1 } });
    expect(await upload({ parentId: folder.id })).toMatchObject({ tags: [], properties: {} });
    expect(await createFolder(alice, { name: unique('child'), parentId: folder.id })).toMatchObject({ tags: [], properties: {} });
  });

  it('inheritTags and inheritCommonProperties: own values first and winning, the folder\'s added', async () => {
    const folder = await createFolder(alice, { name: unique('both'), tags: ['shared', 'folder'], properties: { a: 'folder', b: 'folder', nested: { x: 1 } } });
    await policyOn(folder.id);
    const content = await upload({ parentId: folder.id, tags: ['own', 'shared'], properties: { b: 'own' } });
    expect(content.tags).toEqual(['own', 'shared', 'folder']);
    expect(content.properties).toEqual({ a: 'folder', b: 'own', nested: { x: 1 } });
  });

  it('one flag at a time', async () => {
    const tagsOnly = await createFolder(alice, { name: unique('tags-only'), tags: ['t'], properties: { p: 1 } });
    await policyOn(tagsOnly.id, { inheritCommonProperties: false });
    expect(await upload({ parentId: tagsOnly.id })).toMatchObject({ tags: ['t'], properties: {} });
    const neither = await createFolder(alice, { name: unique('neither'), tags: ['t'], properties: { p: 1 } });
    await policyOn(neither.id, { inheritTags: false, inheritCommonProperties: false });
    expect(await createFolder(alice, { name: unique('sub'), parentId: neither.id })).toMatchObject({ tags: [], properties: {} });
  });

  it('the nearest inheritance policy decides; inheritPolicies=false keeps a policy from the subfolders', async () => {
    const top = await createFolder(alice, { name: unique('top'), tags: ['top'] });
    await policyOn(top.id, { inheritPolicies: false });
    const middle = await createFolder(alice, { name: unique('middle'), parentId: top.id, tags: ['middle'] });
    expect(middle.tags).toEqual(['middle', 'top']);
    expect((await upload({ parentId: middle.id })).tags).toEqual([]);
    // a policy of its own on the subfolder: it hands down again
    await policyOn(middle.id, { inheritCommonProperties: false });
    expect((await upload({ parentId: middle.id })).tags).toEqual(['middle', 'top']);
  });

  it('copies inherit in their target folder; moves and folder changes do not rewrite existing entries', async () => {
    const source = await createFolder(alice, { name: unique('source') });
    const target = await createFolder(alice, { name: unique('target'), tags: ['target'], properties: { shelf: 't' } });
    await policyOn(target.id);
    const original = await upload({ parentId: source.id, tags: ['own'], properties: { shelf: 'own' } });
    expect(await copyContent(alice, original.id, { parentId: target.id, name: unique('copy') })).toMatchObject({ tags: ['own', 'target'], properties: { shelf: 'own' } });
    expect(await updateContent(alice, original.id, { parentId: target.id })).toMatchObject({ tags: ['own'], properties: { shelf: 'own' } });
    const inside = await upload({ parentId: target.id });
    await updateFolder(alice, target.id, { tags: ['renamed'], properties: { shelf: null } });
    const reread = await (await bench.scopeOf('alice')).em.findOneOrFail(Entry, { id: inside.id });
    expect(reread).toMatchObject({ tags: ['target'], properties: { shelf: 't' } });
    expect(await upload({ parentId: target.id })).toMatchObject({ tags: ['renamed'], properties: {} });
  });

  it('the limits of an entry hold for what is inherited too', async () => {
    const crowded = await createFolder(alice, { name: unique('crowded'), tags: Array.from({ length: 200 }, (_, i) => `f${i}`) });
    await policyOn(crowded.id);
    expect(await failure(upload({ parentId: crowded.id, tags: Array.from({ length: 57 }, (_, i) => `c${i}`) }))).toMatchObject({ reasonCode: 'illegalArguments' });
    expect((await upload({ parentId: crowded.id, tags: Array.from({ length: 56 }, (_, i) => `c${i}`) })).tags).toHaveLength(256);
    // a content's own tags had no bound at creation (adding tags had one): 257 are refused now
    expect(await failure(upload({ tags: Array.from({ length: 257 }, (_, i) => `own${i}`) }))).toMatchObject({ reasonCode: 'illegalArguments' });
    expect(await failure(createFolder(alice, { name: unique('too-many'), tags: Array.from({ length: 257 }, (_, i) => `own${i}`) }))).toMatchObject({ reasonCode: 'illegalArguments' });
  });
});
