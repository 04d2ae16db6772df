import type { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import { everyone, groupPrincipal, type Principal } from '../auth/principal.js';
import { mayAdminister } from './roles.js';

/**
 * The ACLs of DESIGN §10 as stored (Migration20261127020000Acls): an ACL is `{principal: level}`,
 * level 1 read, 2 write, 3 all, each including the ones below. A stored ACL never changes (a change
 * makes or finds another), so what this process read of one stays true: the cache below needs no
 * invalidation.
 */
export const permissions = ['read', 'write', 'all'] as const;
export type Permission = (typeof permissions)[number];

/** 0: none (the entry is not there for the caller). */
export type Level = 0 | 1 | 2 | 3;
export const levelOf = (permission: Permission): Level => (permissions.indexOf(permission) + 1) as Level;
export const permissionOfLevel = (level: Level): Permission | null => (level === 0 ? null : permissions[level - 1]!);

/** A stored ACL: the highest level of each principal. */
export type AclLevels = Readonly<Record<string, number>>;

/** A new repository's root ACL: everyone signed in may do everything, as a client of the spec expects. */
export const defaultRootAcl: AclLevels = { [everyone]: levelOf('all') };

/** The principals a caller acts as: its user name, its groups, EVERYONE. */
export function principalsOf(principal: Principal): string[] {
  return [principal.userName, ...principal.groups.map(groupPrincipal), everyone];
}

/** The highest level any of the caller's principals holds in `levels`. */
export function levelIn(principal: Principal, levels: AclLevels): Level {
  let level = 0;
  for (const name of principalsOf(principal)) level = Math.max(level, levels[name] ?? 0);
  return level as Level;
}

/** What the rules read of an entry: its owner and its effective ACL. */
export interface AclFacts {
  owner: string;
  aclId: number | string | null;
}

/** Whether a caller reads everything in a repository: an administrator, or one who may read every ACL it stores. */
export const readsAll = (principal: Principal, readable: ReadableAcls | undefined) => mayAdminister(principal) || readable?.all === true;

/** The readable ACLs of one caller in one repository, for searches. */
export interface ReadableAcls {
  /** the ids of the repository's ACLs the caller may read */
  ids: number[];
  /** the caller may read every ACL stored in the repository: no narrower than the repository */
  all: boolean;
}

/**
 * What identifies the ACLs a repository holds (rows are only added): the highest id and how many, as
 * acl_tally keeps them (Migration20261207200000AclTally: in every snapshot, the same figures as `max(id),
 * count(*)` of its `acl` rows, read from a few rows instead of all of them).
 */
const aclStamp = 'max(newest) as newest, sum(n) as total from acl_tally where repository_id = ?';
interface AclStampRow {
  newest: string | null;
  total: string | null;
}
const stampOf = (row: AclStampRow) => `${row.newest ?? 0}:${row.total ?? 0}`;

/**
 * This process's memory of stored ACLs (by id) and of each caller's readable set per repository, the
 * latter kept while the repository holds the same ACLs as the set was computed against (a new ACL is
 * the only way the set can change for fixed principals: stored ACLs never change). The highest id
 * alone would not tell: ids are handed out before commit, so an ACL can become visible after one with
 * a higher id, and only the count shows it.
 */
export class AclCache {
  private readonly levels = new LRUCache<string, AclLevels>({ max: 50_000 });
  private readonly readable = new LRUCache<string, { stamp: string; readable: ReadableAcls }>({ max: 10_000 });

  /** The levels of a stored ACL, read from the database (by `unitOfWork`'s entity manager) when not held yet. */
  async levelsOf(unitOfWork: { readonly em: EntityManager }, id: number | string): Promise<AclLevels | undefined> {
    const key = String(id);
    const known = this.levels.get(key);
    if (known) return known;
    const [row] = await unitOfWork.em.execute<{ entries: AclLevels }[]>('select entries from acl where id = ?', [key]);
    if (row) this.levels.set(key, row.entries);
    return row?.entries;
  }

  /** The ACL ids of `repositoryId` that `principal` may read (ACL grants of its principals), computed again once the repository has another ACL. */
  async readableOf(em: EntityManager, principal: Principal, repositoryId: string): Promise<ReadableAcls> {
    const principals = principalsOf(principal);
    const key = `${repositoryId}\u0000${principals.join('\u0000')}`;
    const [current] = await em.execute<AclStampRow[]>(`select ${aclStamp}`, [repositoryId]);
    const cached = this.readable.get(key);
    if (cached && cached.stamp === stampOf(current!)) return cached.readable;
    // the grants with the stamp of the same snapshot (one statement): an ACL committed meanwhile is in both or in neither
    const [row] = await em.execute<(AclStampRow & { ids: string[] })[]>(
      `select array(select distinct acl_id from acl_grant where repository_id = ? and principal in (?)) as ids, ${aclStamp}`,
      [repositoryId, principals, repositoryId],
    );
    const ids = row!.ids.map(Number);
    const readable = { ids, all: ids.length === Number(row!.total ?? 0) };
    this.readable.set(key, { stamp: stampOf(row!), readable });
    return readable;
  }
}

/**
 * The level of `principal` on an entry: administrators and the owner hold all; otherwise its ACL
 * decides. `unitOfWork`'s entity manager (a request's is made when first used) reads only what this
 * process does not hold: the ACL's levels, the ACL of a row just inserted (in its transaction).
 */
export async function levelOn(unitOfWork: { readonly em: EntityManager }, cache: AclCache, principal: Principal, entry: AclFacts & { id: string }): Promise<Level> {
  if (mayAdminister(principal) || entry.owner === principal.userName) return 3;
  const aclId = entry.aclId ?? (await unitOfWork.em.execute<{ acl_id: string }[]>('select acl_id from entry where id = ?', [entry.id]))[0]?.acl_id;
  if (aclId === undefined || aclId === null) return 0;
  const levels = await cache.levelsOf(unitOfWork, aclId);
  return levels ? levelIn(principal, levels) : 0;
}
