import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { administrator, createOperationsBench, failure, type OperationsBench } from '../../../test/helpers/operations.js';
import { addMember, createGroup, deleteGroup, groupsOfUser, listGroups, removeMember } from './groups.js';
import { authenticate, createUser, deleteUser, resolveSession } from './operations.js';

// The groups' operations on a real database (DESIGN §10), and the caller's groups as a session reads them.
let bench: OperationsBench;
const em = () => bench.services.orm.em.fork() as EntityManager;
const password = 'a long enough password';

beforeAll(async () => {
  bench = await createOperationsBench();
  for (const userName of ['Alice', 'bob', 'carol', 'dave']) await createUser(em(), bench.services, administrator, { userName, password, roles: [] });
});
afterAll(() => bench?.stop());

const login = (user: string) => authenticate(em(), bench.services, { user, password, address: '127.0.0.1' });
const principalOf = (token: string) => resolveSession(em(), bench.services, token);
const groupNamed = async (name: string) => (await listGroups(em())).find((group) => group.name === name);

describe('groups (createGroup, listGroups, deleteGroup)', () => {
  it('creates a group without members, by its creator, and lists it with its members', async () => {
    const created = await createGroup(em(), administrator, { name: '  Editors ' });
    expect(created).toEqual({ name: 'Editors', members: [], createdAt: expect.any(Date), createdBy: 'admin' });
    await addMember(em(), bench.services, administrator, { name: 'editors', userName: 'ALICE' });
    await addMember(em(), bench.services, administrator, { name: 'EDITORS', userName: 'bob' });
    expect(await groupNamed('Editors')).toEqual({ ...created, members: ['Alice', 'bob'] });
  });

  it('refuses a name taken in any case (409), also when both are created at once', async () => {
    expect(await failure(createGroup(em(), administrator, { name: 'EDITORS' }))).toEqual({ reasonCode: 'conflict', message: "group 'EDITORS' exists" });
    const outcomes = await Promise.all([createGroup(em(), administrator, { name: 'Twins' }), createGroup(em(), administrator, { name: 'twins' })].map(failure));
    expect(outcomes.map((outcome) => outcome?.reasonCode ?? 'created').sort()).toEqual(['conflict', 'created']);
  });

  it("refuses names outside the user name rule and 'EVERYONE' in any case (400 naming the field)", async () => {
    for (const name of ['', 'two words', 'x'.repeat(65), 'adm\u0456n', 'group:x', 'EVERYONE', 'everyone', 'EveryOne']) {
      expect({ name, failure: await failure(createGroup(em(), administrator, { name })) }).toEqual({
        name,
        failure: { reasonCode: 'illegalArguments', message: expect.stringMatching(/^name: /) },
      });
    }
    expect((await failure(createGroup(em(), administrator, { name: 'everyone' })))?.message).toContain("must not be 'EVERYONE'");
    expect(await failure(createGroup(em(), administrator, {} as { name: string }))).toEqual({ reasonCode: 'illegalArguments', message: 'name: is required' });
    // 'everyone-else' is just a name
    expect((await createGroup(em(), administrator, { name: 'everyone-else' })).name).toBe('everyone-else');
  });

  it('deletes a group named in any case with its memberships; an unknown one is a 404 naming it', async () => {
    await createGroup(em(), administrator, { name: 'Temporary' });
    await addMember(em(), bench.services, administrator, { name: 'temporary', userName: 'carol' });
    expect(await groupsOfUser(em(), 'carol')).toEqual(['Temporary']);
    await deleteGroup(em(), bench.services, administrator, { name: 'TEMPORARY' });
    expect(await groupNamed('Temporary')).toBeUndefined();
    expect(await groupsOfUser(em(), 'carol')).toEqual([]);
    expect(await failure(deleteGroup(em(), bench.services, administrator, { name: 'temporary' }))).toEqual({ reasonCode: 'notFound', message: "group 'temporary' not found" });
  });
});

describe('memberships (addMember, removeMember)', () => {
  it('answers the group; a member added twice is a 409, a non-member removed a 404', async () => {
    await createGroup(em(), administrator, { name: 'Readers' });
    expect((await addMember(em(), bench.services, administrator, { name: 'readers', userName: 'carol' })).members).toEqual(['carol']);
    expect(await failure(addMember(em(), bench.services, administrator, { name: 'READERS', userName: 'CAROL' }))).toEqual({
      reasonCode: 'conflict',
      message: "user 'carol' is a member of group 'Readers' already",
    });
    expect(await removeMember(em(), bench.services, administrator, { name: 'readers', userName: 'Carol' })).toMatchObject({ name: 'Readers', members: [] });
    expect(await failure(removeMember(em(), bench.services, administrator, { name: 'readers', userName: 'carol' }))).toEqual({
      reasonCode: 'notFound',
      message: "user 'carol' is not a member of group 'Readers'",
    });
  });

  it('names the unknown group or user (404) and the malformed field (400)', async () => {
    for (const change of [addMember, removeMember]) {
      expect(await failure(change(em(), bench.services, administrator, { name: 'nobody-group', userName: 'carol' }))).toEqual({ reasonCode: 'notFound', message: "group 'nobody-group' not found" });
      expect(await failure(change(em(), bench.services, administrator, { name: 'readers', userName: 'nobody' }))).toEqual({ reasonCode: 'notFound', message: "user 'nobody' not found" });
      expect(await failure(change(em(), bench.services, administrator, { name: 'readers', userName: 'no body' }))).toMatchObject({ reasonCode: 'illegalArguments', message: expect.stringMatching(/^userName: /) });
      expect(await failure(change(em(), bench.services, administrator, { name: 'EVERYONE', userName: 'carol' }))).toMatchObject({ reasonCode: 'illegalArguments', message: expect.stringMatching(/^name: /) });
    }
  });

  it('adds one member once when two calls add it at once', async () => {
    await createGroup(em(), administrator, { name: 'Racers' });
    const outcomes = await Promise.all([1, 2].map(() => failure(addMember(em(), bench.services, administrator, { name: 'racers', userName: 'dave' }))));
    expect(outcomes.map((outcome) => outcome?.reasonCode ?? 'added').sort()).toEqual(['added', 'conflict']);
    expect((await groupNamed('Racers'))?.members).toEqual(['dave']);
  });

  it('go with a deleted user', async () => {
    await createUser(em(), bench.services, administrator, { userName: 'leaving', password, roles: [] });
    await createGroup(em(), administrator, { name: 'Stayers' });
    await addMember(em(), bench.services, administrator, { name: 'stayers', userName: 'leaving' });
    await addMember(em(), bench.services, administrator, { name: 'stayers', userName: 'dave' });
    await deleteUser(em(), bench.services, administrator, 'LEAVING');
    expect((await groupNamed('Stayers'))?.members).toEqual(['dave']);
    expect(await groupsOfUser(em(), 'leaving')).toEqual([]);
  });
});

describe("the caller's groups (Principal.groups)", () => {
  it('are read with the session, by name as stored, sorted', async () => {
    await createGroup(em(), administrator, { name: 'zeta' });
    await createGroup(em(), administrator, { name: 'Alpha' });
    const token = await login('dave');
    expect((await principalOf(token)).groups).toEqual(['Racers', 'Stayers']);
    await addMember(em(), bench.services, administrator, { name: 'ZETA', userName: 'dave' });
    await addMember(em(), bench.services, administrator, { name: 'alpha', userName: 'dave' });
    expect(await principalOf(token)).toEqual({ userName: 'dave', roles: ['USER'], groups: ['Alpha', 'Racers', 'Stayers', 'zeta'] });
  });

  it("follow each change at once in this process, though principals are cached (add, remove, the group's deletion)", async () => {
    await createGroup(em(), administrator, { name: 'Fleeting' });
    const [alice, alsoAlice, bob] = await Promise.all([login('alice'), login('Alice'), login('bob')]);
    const groupsOf = async (token: string) => (await principalOf(token)).groups;
    // read once: cached from here on
    expect(await groupsOf(alice)).toEqual(['Editors']);
    expect(await groupsOf(bob)).toEqual(['Editors']);
    await addMember(em(), bench.services, administrator, { name: 'fleeting', userName: 'alice' });
    expect([await groupsOf(alice), await groupsOf(alsoAlice), await groupsOf(bob)]).toEqual([['Editors', 'Fleeting'], ['Editors', 'Fleeting'], ['Editors']]);
    await removeMember(em(), bench.services, administrator, { name: 'editors', userName: 'alice' });
    expect(await groupsOf(alice)).toEqual(['Fleeting']);
    await deleteGroup(em(), bench.services, administrator, { name: 'fleeting' });
    expect(await groupsOf(alice)).toEqual([]);
  });
});
