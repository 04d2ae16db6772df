import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { recordEvent } from '../events/record.js';
import type { Services } from '../../context.js';
import { conflict, isForeignKeyViolation, isUniqueViolation, notFound } from '../../errors.js';
import { groupName, parseInput, userName } from './names.js';
import type { Principal } from './principal.js';

/**
 * Postgres channel announcing, with a user's name as stored, that the user's group memberships changed
 * (added, removed, group deleted): every process forgets the user's cached principals.
 */
export const membershipsChangedChannel = 'memberships_changed';

/** Another process (or this one) announced a membership change: the user's sessions read their groups again. */
export function forgetChangedMemberships(services: Services, userName: string): void {
  services.auth.sessions.forgetUser(userName);
}

/** The SQL array of the names of the groups whose member is the user named by `userName` (a column or `?`), sorted whatever their case. */
export const groupsOfUserSql = (userName: string) => `array(select m.group_name from group_member m where m.user_name = ${userName} order by lower(m.group_name))`;

/**
 * The groups a user is a member of now, for a caller without a session (a background job acts as the
 * user who submitted it): as `resolveSession` reads them for a session.
 */
export async function groupsOfUser(em: EntityManager, userName: string): Promise<string[]> {
  const [row] = await em.getConnection().execute<{ groups: string[] }[]>(`select ${groupsOfUserSql('?')} as groups`, [userName]);
  return row!.groups;
}

/** A group (DESIGN §10): the `group:<name>` principal of access control lists. */
export interface GroupRecord {
  /** as first spelled; unique whatever its case */
  name: string;
  /** user names as stored, sorted whatever their case */
  members: string[];
  createdAt: Date;
  createdBy: string;
}

interface GroupRow {
  name: string;
  members: string[];
  created_at: Date | string;
  created_by: string;
}

const toRecord = (row: GroupRow): GroupRecord => ({ name: row.name, members: row.members, createdAt: new Date(row.created_at), createdBy: row.created_by });

const byName = z.object({ name: groupName });
const membership = z.object({ name: groupName, userName });

const groupsQuery = `
  select g.name, g.created_at, g.created_by,
         array(select m.user_name from group_member m where m.group_name = g.name order by lower(m.user_name)) as members
    from user_group g`;

async function findGroup(em: EntityManager, name: string): Promise<GroupRecord> {
  const [row] = await em.getConnection().execute<GroupRow[]>(`${groupsQuery} where lower(g.name) = lower(?)`, [name]);
  if (!row) throw notFound(`group '${name}' not found`);
  return toRecord(row);
}

/** POST A/group: a new group without members; a name taken in any case is a 409. */
export async function createGroup(em: EntityManager, actor: Principal, input: { name: string }): Promise<GroupRecord> {
  const { name } = parseInput(byName, input);
  try {
    return await em.transactional(async (tx) => {
      const [row] = await tx.execute<GroupRow[]>(
        `insert into user_group (name, created_at, created_by) values (?, now(), ?) returning name, created_at, created_by, '{}'::text[] as members`,
        [name, actor.userName],
      );
      await recordEvent(tx as EntityManager, { type: 'GROUP_CREATED', actor: actor.userName, details: { group: name } });
      return toRecord(row!);
    });
  } catch (error) {
    // the unique index on lower(name) also refuses a name that differs only in case
    if (isUniqueViolation(error)) throw conflict(`group '${name}' exists`);
    throw error;
  }
}

/** GET A/groups: every group with its members, by name. */
export async function listGroups(em: EntityManager): Promise<GroupRecord[]> {
  return (await em.getConnection().execute<GroupRow[]>(`${groupsQuery} order by lower(g.name)`)).map(toRecord);
}

/** A statement announcing, at commit, a membership change of each user name it returns in `user_name`. */
const announcing = (statement: string) => `with changed as (${statement}) select user_name, pg_notify('${membershipsChangedChannel}', user_name) from changed`;

/** DELETE A/group: the group and its memberships; its members' sessions lose it at once in every process. */
export async function deleteGroup(em: EntityManager, services: Services, actor: Principal, input: { name: string }): Promise<void> {
  const { name } = parseInput(byName, input);
  const members = await em.transactional(async (tx) => {
    const connection = tx.getConnection();
    const context = tx.getTransactionContext();
    // the group's row is locked first: no member is added between the members' removal and the group's
    const [row] = await connection.execute<{ name: string }[]>('select name from user_group where lower(name) = lower(?) for update', [name], 'all', context);
    if (!row) throw notFound(`group '${name}' not found`);
    const removed = await connection.execute<{ user_name: string }[]>(announcing('delete from group_member where group_name = ? returning user_name'), [row.name], 'all', context);
    await connection.execute('delete from user_group where name = ?', [row.name], 'all', context);
    await recordEvent(tx as EntityManager, { type: 'GROUP_DELETED', actor: actor.userName, details: { group: row.name, members: removed.map((member) => member.user_name) } });
    return removed.map((member) => member.user_name);
  });
  for (const member of members) forgetChangedMemberships(services, member);
}

/** The stored spellings of a group and a user named in any case; a 404 names the one that does not exist. */
async function findMembership(em: EntityManager, input: { name: string; userName: string }): Promise<{ group: GroupRecord; userName: string }> {
  const group = await findGroup(em, input.name);
  const [user] = await em.getConnection().execute<{ user_name: string }[]>('select user_name from app_user where lower(user_name) = lower(?)', [input.userName]);
  if (!user) throw notFound(`user '${input.userName}' not found`);
  return { group, userName: user.user_name };
}

/**
 * POST A/group/members: adds a user to a group and answers the group. A user who is a member already
 * is a 409, as every second creation in the administration domain is (a user, a group, a repository).
 */
export async function addMember(em: EntityManager, services: Services, actor: Principal, input: { name: string; userName: string }): Promise<GroupRecord> {
  const asked = parseInput(membership, input);
  const { group, userName: member } = await findMembership(em, asked);
  const already = conflict(`user '${member}' is a member of group '${group.name}' already`);
  if (group.members.includes(member)) throw already;
  try {
    await em.transactional(async (tx) => {
      await tx.execute(announcing('insert into group_member (group_name, user_name) values (?, ?) returning user_name'), [group.name, member]);
      await recordEvent(tx as EntityManager, { type: 'GROUP_MEMBER_ADDED', actor: actor.userName, details: { group: group.name, userName: member } });
    });
  } catch (error) {
    // added by another call at the same moment
    if (isUniqueViolation(error)) throw already;
    // the group or the user was deleted since it was read: asked again, the answer is the 404 naming it
    if (isForeignKeyViolation(error)) return addMember(em, services, actor, input);
    throw error;
  }
  forgetChangedMemberships(services, member);
  return findGroup(em, group.name);
}

/** DELETE A/group/members: removes a user from a group; one who is not a member is a 404. */
export async function removeMember(em: EntityManager, services: Services, actor: Principal, input: { name: string; userName: string }): Promise<GroupRecord> {
  const asked = parseInput(membership, input);
  const { group, userName: member } = await findMembership(em, asked);
  await em.transactional(async (tx) => {
    const removed = await tx.execute(announcing('delete from group_member where group_name = ? and user_name = ? returning user_name'), [group.name, member]);
    if (removed.length === 0) throw notFound(`user '${member}' is not a member of group '${group.name}'`);
    await recordEvent(tx as EntityManager, { type: 'GROUP_MEMBER_REMOVED', actor: actor.userName, details: { group: group.name, userName: member } });
  });
  forgetChangedMemberships(services, member);
  return findGroup(em, group.name);
}
