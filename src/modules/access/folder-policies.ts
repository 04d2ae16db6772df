import type { EntityManager } from '@mikro-orm/postgresql';
import { plainSelect, type PlainRecord } from '../../db/plain-rows.js';
import { executePrepared } from '../../db/prepared.js';
import { conflict } from '../../errors.js';
import { Entry } from '../entries/entry.entity.js';
import type { InheritanceFields, PolicyKind, TypeRestrictionFields } from '../policies/operations.js';

/** What the policies assigned to a folder and its ancestors (as far as inheritance allows) say for entries placed in it. */
export interface FolderPolicies {
  /** the nearest default type policy's type */
  defaultTypeName: string | null;
  /** every type restriction in effect: all of them must accept a type */
  restrictions: TypeRestrictionFields[];
  /** the nearest inheritance policy: what the folder hands down to the entries created in it */
  inheritance: InheritanceFields | null;
  /** how deep the folder lies: 1 for a folder at the repository's root, 0 for the root */
  level: number;
}

/**
 * The deepest level a folder may lie at (a folder at the root is at level 1). Every rule of a folder
 * comes from walking its ancestors up to the root: the bound keeps that walk short, and a folder
 * found deeper (made before the bound, or a cycle) fails closed instead of escaping the rules above it.
 */
export const maxFolderLevels = 1000;

const root: FolderPolicies = { defaultTypeName: null, restrictions: [], inheritance: null, level: 0 };

/**
 * The policies in effect in `folderId` (DESIGN §8) and its level, in one query (a 409 for a folder
 * deeper than maxFolderLevels). A folder's policies reach its subfolders unless an inheritance policy on a folder on the
 * way says `inheritPolicies: false` (no inheritance policy = they do). The inheritance policy in effect
 * also says whether new entries get the folder's tags and common properties (entries/inheritance.ts);
 * its ACL flag is read by the database where ACLs are computed (acl_stops_at, Migration20261127020000Acls);
 * the classification flag is recorded only.
 */
export async function folderPolicies(em: EntityManager, folderId: string | null | undefined): Promise<FolderPolicies> {
  if (!folderId) return root;
  const [chain] = await em.execute<ChainRow[]>(`with recursive ${policyChain} select ${chainSummary}`, [folderId]);
  return policiesOf(chain!, folderId);
}

/**
 * A folder (a plain record: read-only, no unit of work; none when `folderId` is not a folder of the
 * repository) and the policies in effect in it, in one round trip: what an upload into the folder needs.
 */
export async function folderWithPolicies(
  em: EntityManager,
  folderId: string,
  repositoryId: string,
): Promise<{ folder: PlainRecord<Entry>; policies: FolderPolicies } | undefined> {
  // mapping the folder into the unit of work was ≈ 4 % of an upload's node CPU (docs/benchmarks.md)
  const columns = plainSelect(em, Entry, 'e');
  const [found] = await executePrepared<Record<string, unknown> & ChainRow>(
    em,
    'folder-with-policies',
    `with recursive ${policyChain}
     select ${columns.sql}, ${chainSummary}
       from entry e where e.id = ? and e.repository_id = ? and e.entry_type = 'FOLDER'`,
    [folderId, folderId, repositoryId],
  );
  if (!found) return undefined;
  const { folder_policies, folder_level, ...row } = found;
  return { folder: columns.revive(row), policies: policiesOf({ folder_policies, folder_level }, folderId) };
}

interface PolicyRow {
  depth: number;
  kind: PolicyKind;
  fields: Record<string, unknown>;
}

/** The policies assigned along a folder's chain, nearest first, and the chain's length. */
interface ChainRow {
  folder_policies: PolicyRow[];
  folder_level: number;
}

/**
 * The folder and its ancestors, nearest first (`chain`), for the policies assigned along it: up to the
 * root, or one level past `maxFolderLevels` (a chain that long is refused: policiesOf).
 */
const policyChain = `chain (id, parent_id, depth) as (
       select id, parent_id, 0 from entry where id = ?
       union all
       select e.id, e.parent_id, c.depth + 1 from entry e join chain c on e.id = c.parent_id where c.depth < ${maxFolderLevels}
     )`;
const chainPolicies = `chain c join policy_assignment a on a.folder_id = c.id join policy p on p.id = a.policy_id`;
const chainSummary = `(select coalesce(json_agg(json_build_object('depth', c.depth, 'kind', p.kind, 'fields', p.fields) order by c.depth), '[]'::json)
                         from ${chainPolicies}) as folder_policies,
                      (select count(*)::int from chain) as folder_level`;

function policiesOf({ folder_policies: rows, folder_level: level }: ChainRow, folderId: string): FolderPolicies {
  if (level > maxFolderLevels) {
    throw conflict(`folder '${folderId}' lies more than ${maxFolderLevels} levels deep, deeper than a folder may: move it up before placing anything in it`);
  }
  const result: FolderPolicies = { defaultTypeName: null, restrictions: [], inheritance: null, level };
  // the first depth whose policies no longer reach the folder: above a folder that does not pass them on
  let reach = Infinity;
  for (const row of rows) if (row.kind === 'INHERITANCE' && row.depth >= 1 && (row.fields as unknown as InheritanceFields).inheritPolicies === false) reach = Math.min(reach, row.depth);
  for (const row of rows) {
    if (row.depth >= reach) break;
    if (row.kind === 'DEFAULT_TYPE') result.defaultTypeName ??= row.fields.defaultTypeName as string;
    if (row.kind === 'TYPE_RESTRICTION') result.restrictions.push(row.fields as unknown as TypeRestrictionFields);
    if (row.kind === 'INHERITANCE') result.inheritance ??= row.fields as unknown as InheritanceFields;
  }
  return result;
}

/**
 * A 409 when a type restriction in effect refuses `typeName` (null: untyped content, refused only by
 * a list of allowed types). `includeSubTypes` lets a named type stand for its subtypes in the registry.
 */
export async function checkTypeAllowed(em: EntityManager, policies: FolderPolicies, typeName: string | null, folderName: string): Promise<void> {
  if (policies.restrictions.length === 0) return;
  const lineage = typeName
    ? (
        await em.execute<{ name: string }[]>(
          `with recursive up (name, parent_name, depth) as (
             select name, parent_name, 0 from content_type where name = ?
             union all select t.name, t.parent_name, u.depth + 1 from content_type t join up u on t.name = u.parent_name where u.depth < 100
           ) select name from up`,
          [typeName],
        )
      ).map((row) => row.name)
    : [];
  const matches = (named: string[], includeSubTypes: boolean) =>
    typeName !== null && named.some((name) => name === typeName || (includeSubTypes && lineage.includes(name)));
  for (const rule of policies.restrictions) {
    if (matches(rule.deniedTypeNames, rule.includeSubTypes)) throw conflict(`type '${typeName}' is denied in folder '${folderName}'`);
    if (rule.allowedTypeNames.length > 0 && !matches(rule.allowedTypeNames, rule.includeSubTypes)) {
      throw conflict(`${typeName ? `type '${typeName}'` : 'content without a type'} is not allowed in folder '${folderName}' (allowed: ${rule.allowedTypeNames.join(', ')})`);
    }
  }
}

/**
 * The type rule for content moved, copied, retyped or checked in into `folderId` (null: the root, which
 * has no policies). Reads through `em`'s transaction, so a change made in it (a move) is seen.
 */
export async function requireTypeAllowedIn(em: EntityManager, folderId: string | null | undefined, typeName: string | null): Promise<void> {
  const policies = await folderPolicies(em, folderId);
  if (policies.restrictions.length === 0) return;
  const [folder] = await em.execute<{ name: string }[]>('select name from entry where id = ?', [folderId]);
  await checkTypeAllowed(em, policies, typeName, folder?.name ?? String(folderId));
}

/**
 * A folder moved under `newParentId` (null: the root): a 409 when the deepest folder of its subtree would
 * lie deeper than maxFolderLevels there. The walk down stops one level past the room there is.
 */
export async function requireFolderDepthAllowed(em: EntityManager, folder: { id: string; name: string; repositoryId: string }, newParentId: string | null): Promise<void> {
  const room = maxFolderLevels - (await folderPolicies(em, newParentId)).level;
  const [subtree] = await em.execute<{ height: number }[]>(
    `with recursive tree (id, height) as (
       select ?::text, 1
       union all
       select e.id, t.height + 1 from entry e join tree t on e.parent_id = t.id
        where e.repository_id = ? and e.is_latest and e.entry_type = 'FOLDER' and t.height <= ?
     )
     select max(height)::int as height from tree`,
    [folder.id, folder.repositoryId, room],
  );
  if (subtree!.height > room) {
    throw conflict(`folder '${folder.name}' cannot be moved there: its folders would lie more than ${maxFolderLevels} levels deep, deeper than a folder may`);
  }
}

/**
 * A folder moved under `newParentId`: the type restrictions that reach it there apply to every content
 * in it and below, as if each had been moved on its own (409 for the first one refused). Called after
 * the move is written in the transaction, so each content's policies are read at its new place. When
 * nothing is restricted at the new parent, nothing new can reach the folder: no content is read.
 */
export async function requireTypesAllowedBelow(em: EntityManager, folderId: string, newParentId: string | null): Promise<void> {
  if (!newParentId || (await folderPolicies(em, newParentId)).restrictions.length === 0) return;
  const placed = await em.execute<{ parent_id: string; type_name: string | null }[]>(
    `with recursive tree (id, depth) as (
       select ?::text, 0
       union all
       select e.id, t.depth + 1 from entry e join tree t on e.parent_id = t.id where e.entry_type = 'FOLDER' and t.depth < ${maxFolderLevels}
     )
     select distinct c.parent_id, c.type_name from entry c join tree t on c.parent_id = t.id where c.entry_type = 'CONTENT' and c.is_latest`,
    [folderId],
  );
  for (const { parent_id, type_name } of placed) await requireTypeAllowedIn(em, parent_id, type_name);
}
