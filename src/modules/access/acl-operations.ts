import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { illegalArguments } from '../../errors.js';
import { parseInput } from '../auth/names.js';
import type { Services } from '../../context.js';
import { inTransaction, lockFolderTree } from '../entries/chronicles.js';
import type { EntryType } from '../entries/entry.entity.js';
import { requireEntry } from '../entries/queries.js';
import type { EntryScope } from '../entries/scope.js';
import { findRepository } from '../repositories/operations.js';
import { everyone, groupPrincipal, type Principal } from '../auth/principal.js';
import { recordEntryEvent, recordEvent } from '../events/record.js';
import { levelOf, permissionOfLevel, permissions, type AclLevels, type Level, type Permission } from './acl.js';
import { authorize, levelOnEntry, requiredLevelOf, type AccessScope, type EntryAction, type EntryFacts } from './policy.js';

/**
 * The ACL verbs of DESIGN §10: read and replace an entry's own ACL entries or the repository root's,
 * and the caller's allowed actions. Effective ACLs are recomputed here, in the change's transaction
 * (`recomputeAcls`), never per request.
 */

/** One entry of an ACL as the API shows it. */
export interface AclEntry {
  principal: string;
  permission: Permission;
}

export interface EffectiveAclEntry extends AclEntry {
  /** the folder (its id) or repository (its repositoryId) the permission comes from; absent: the entry's own */
  inheritedFrom?: string;
}

export interface AclView {
  inherit: boolean;
  entries: AclEntry[];
  effective: EffectiveAclEntry[];
}

/** The most entries an ACL may have (a list is read on every change below it). */
const maxAclEntries = 200;

/** The body of `PUT …/acl` (DESIGN §10): `inherit` absent keeps it as it is. */
export const aclInputSchema = z
  .object({
    inherit: z.boolean().optional(),
    entries: z
      .array(z.object({ principal: z.string().trim().min(1).max(200), permission: z.enum(permissions) }).strict())
      .max(maxAclEntries),
  })
  .strict();
export type AclInput = z.infer<typeof aclInputSchema>;

/** The body of `PUT A/repository/acl`: the root has nothing to inherit. */
export const rootAclInputSchema = aclInputSchema.omit({ inherit: true });
export type RootAclInput = z.infer<typeof rootAclInputSchema>;

/** A principal as given: EVERYONE (in any case), `group:<name>` or a user name. */
function principalOf(given: string): { kind: 'everyone' | 'group' | 'user'; name: string } {
  if (given.toUpperCase() === everyone) return { kind: 'everyone', name: everyone };
  const group = /^group:(.*)$/i.exec(given);
  return group ? { kind: 'group', name: group[1]! } : { kind: 'user', name: given };
}

/** The stored spelling of each name (lower case → as registered) found in `table`. */
async function registeredNames(em: EntityManager, table: 'app_user' | 'user_group', column: 'user_name' | 'name', names: string[]): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const rows = await em.execute<Record<string, string>[]>(`select ${column} as name from ${table} where lower(${column}) in (?)`, [names.map((n) => n.toLowerCase())]);
  return new Map(rows.map((row) => [row.name!.toLowerCase(), row.name!]));
}

/**
 * The principals as stored (user names and group names as registered, whatever the case given;
 * `EVERYONE`), with their levels: a 400 names an unknown user or group, or a principal named twice.
 */
async function storedLevels(em: EntityManager, entries: AclEntry[]): Promise<Record<string, number>> {
  const given = entries.map((entry) => principalOf(entry.principal));
  const namesOf = (kind: 'group' | 'user') => given.filter((p) => p.kind === kind).map((p) => p.name);
  const registered = {
    user: await registeredNames(em, 'app_user', 'user_name', namesOf('user')),
    group: await registeredNames(em, 'user_group', 'name', namesOf('group')),
  };
  const levels: Record<string, number> = {};
  given.forEach(({ kind, name }, index) => {
    let stored = everyone;
    if (kind !== 'everyone') {
      const found = registered[kind].get(name.toLowerCase());
      if (!found) {
        throw illegalArguments(
          `entries.${index}.principal: no ${kind} '${name}'${kind === 'user' ? ' (a group is written group:<name>, every signed-in user EVERYONE)' : ''}`,
        );
      }
      stored = kind === 'group' ? groupPrincipal(found) : found;
    }
    if (levels[stored] !== undefined) throw illegalArguments(`entries.${index}.principal: '${stored}' is named twice`);
    levels[stored] = levelOf(entries[index]!.permission);
  });
  return levels;
}

const asEntries = (levels: AclLevels): AclEntry[] =>
  Object.entries(levels)
    .map(([principal, level]) => ({ principal, permission: permissionOfLevel(level as Level)! }))
    .sort((a, b) => a.principal.localeCompare(b.principal));

/**
 * Computes the effective ACLs of `ids` and of everything below them again (acl_recompute,
 * Migration20261127020000Acls), after their own entries, their place or an inheritance policy on the
 * way changed. Returns how many entries changed.
 */
export async function recomputeAcls(em: EntityManager, repositoryId: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const [row] = await em.execute<{ changed: number }[]>('select acl_recompute(?, array[?]::text[]) as changed', [repositoryId, ids]);
  return row?.changed ?? 0;
}

/** The rows the ACL of `entry` is kept on: every version of a content (its chronicle), or the folder. */
async function aclRows(em: EntityManager, entry: { id: string; entryType: EntryType; chronicalId: string }, repositoryId: string): Promise<string[]> {
  if (entry.entryType === 'FOLDER') return [entry.id];
  const rows = await em.execute<{ id: string }[]>('select id from entry where chronical_id = ? and repository_id = ? order by id for update', [
    entry.chronicalId,
    repositoryId,
  ]);
  return rows.map((r) => r.id);
}

interface ChainRow {
  id: string;
  acl_own: AclLevels;
  acl_inherit: boolean;
  stops: boolean;
  depth: number;
}

/** The ACL of an entry as the API shows it: its own entries, and the effective ones with where each comes from. */
export async function aclViewOf(scope: AccessScope, entryId: string): Promise<AclView> {
  // the entry and its folders up to the root, nearest first, with what each hands down
  const chain = await scope.em.execute<ChainRow[]>(
    `with recursive chain (id, parent_id, acl_own, acl_inherit, depth) as (
       select id, parent_id, acl_own, acl_inherit, 0 from entry where id = ?
       union all select e.id, e.parent_id, e.acl_own, e.acl_inherit, c.depth + 1 from entry e join chain c on e.id = c.parent_id where c.depth < 1001
     ) select id, acl_own, acl_inherit, acl_stops_at(id) as stops, depth from chain order by depth`,
    [entryId],
  );
  const [self] = chain;
  const effective = new Map<string, { level: number; from?: string }>();
  const add = (levels: AclLevels, from?: string) => {
    for (const [principal, level] of Object.entries(levels)) if ((effective.get(principal)?.level ?? 0) < level) effective.set(principal, { level, from });
  };
  add(self!.acl_own);
  for (let i = 0; chain[i]!.acl_inherit; i++) {
    const folder = chain[i + 1];
    if (!folder) {
      add(scope.repository.acl, scope.repository.id);
      break;
    }
    if (folder.stops) break;
    add(folder.acl_own, folder.id);
  }
  return {
    inherit: self!.acl_inherit,
    entries: asEntries(self!.acl_own),
    effective: [...effective.entries()]
      .map(([principal, { level, from }]) => ({ principal, permission: permissionOfLevel(level as Level)!, ...(from && { inheritedFrom: from }) }))
      .sort((a, b) => a.principal.localeCompare(b.principal)),
  };
}

/** The subject of the entry ACL verbs: a folder or a content, looked up by the caller (404 when it may not read it). */
type AclSubject = EntryFacts & { entryType: EntryType; chronicalId: string };

/** Replaces an entry's own ACL entries (and `inherit` when given): `all` on it needed (403). */
async function setEntryAcl(scope: AccessScope, entry: AclSubject, input: unknown): Promise<void> {
  const body = parseInput(aclInputSchema, input);
  await authorize(scope, 'changeAcl', { entry });
  const levels = await storedLevels(scope.em, body.entries);
  const rows = await aclRows(scope.em, entry, scope.repository.id);
  await scope.em.execute(
    `update entry set acl_own = ?::jsonb, acl_inherit = coalesce(?::boolean, acl_inherit) where id in (?)`,
    [JSON.stringify(levels), body.inherit ?? null, rows],
  );
  await recomputeAcls(scope.em, scope.repository.id, rows);
  await recordEntryEvent(scope, 'ACL_CHANGED', entry, { entries: body.entries, inherit: body.inherit ?? null });
}

/** An entry's ACL (404 when the caller may not read it). */
export async function entryAcl(scope: EntryScope, id: string, expected?: EntryType): Promise<AclView> {
  return aclViewOf(scope, (await requireEntry(scope, id, expected)).id);
}

/** Replaces an entry's own ACL entries (`all` on it needed), in one transaction with what it hands down. */
export async function changeEntryAcl(scope: EntryScope, id: string, input: unknown, expected?: EntryType): Promise<AclView> {
  await inTransaction(scope, async (tx) => {
    // after moves and folder changes, as they lock: what the entry inherits is settled
    await lockFolderTree(tx);
    await setEntryAcl(tx, await requireEntry(tx, id, expected), input);
  });
  return aclViewOf(scope, id);
}

/** The caller's permission on an entry and what it allows (404 when it may not read it). */
export async function entryPermissions(scope: EntryScope, id: string, expected?: EntryType): Promise<Permissions> {
  return permissionsOn(scope, await requireEntry(scope, id, expected));
}

/** A repository's root ACL (administrators: the administration domain checks the role). */
export async function rootAcl(services: Services, em: EntityManager, repositoryId: string): Promise<{ entries: AclEntry[] }> {
  return { entries: asEntries((await findRepository(services, em, { repositoryId })).acl) };
}

/**
 * Replaces a repository's root ACL (administrators) and recomputes every entry below the root, in one
 * transaction; every process forgets the repository it cached (the repository_changed notification).
 */
export async function changeRootAcl(services: Services, em: EntityManager, actor: Principal, repositoryId: string, input: unknown): Promise<{ entries: AclEntry[] }> {
  const body = parseInput(rootAclInputSchema, input);
  const repository = await findRepository(services, em, { repositoryId });
  const levels = await em.transactional(async (tx) => {
    const stored = await storedLevels(tx, body.entries);
    await tx.execute('update repository set acl = ?::jsonb where id = ?', [JSON.stringify(stored), repository.id]);
    const tops = await tx.execute<{ id: string }[]>('select id from entry where repository_id = ? and parent_id is null', [repository.id]);
    await recomputeAcls(
      tx,
      repository.id,
      tops.map((top) => top.id),
    );
    await recordEvent(tx as EntityManager, { type: 'ACL_CHANGED', actor: actor.userName, repository, details: { root: true, entries: body.entries } });
    return stored;
  });
  services.repositories.forget(repository.name);
  return { entries: asEntries(levels) };
}

/** What the caller may do to an entry: its permission and the verbs it allows (CMIS allowable actions). */
export interface Permissions {
  permission: Permission | null;
  actions: EntryAction[];
}

const entryActions: Record<EntryType, EntryAction[]> = {
  FOLDER: ['read', 'update', 'fileInto', 'delete', 'changeAcl'],
  CONTENT: ['read', 'download', 'copy', 'update', 'tag', 'checkOut', 'checkIn', 'cancelCheckOut', 'lock', 'unlock', 'replaceResource', 'convert', 'delete', 'restore', 'purge', 'changeAcl'],
};

export async function permissionsOn(scope: AccessScope, entry: EntryFacts & { entryType: EntryType }): Promise<Permissions> {
  const level = await levelOnEntry(scope, entry);
  return { permission: permissionOfLevel(level), actions: entryActions[entry.entryType].filter((action) => requiredLevelOf(action) <= level) };
}
