import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, illegalArguments, isForeignKeyViolation, isUniqueViolation, notFound } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import { Entry } from '../entries/entry.entity.js';
import { recordEvent } from '../events/record.js';
import { validateTypeName } from '../entries/names.js';
import { repositoryIdOf, repositoryNameOfId } from '../repositories/operations.js';

export type PolicyKind = 'DEFAULT_TYPE' | 'INHERITANCE' | 'TYPE_RESTRICTION';

export interface DefaultTypeFields {
  defaultTypeName: string;
}
export interface InheritanceFields {
  inheritAcl: boolean;
  inheritClassification: boolean;
  inheritCommonProperties: boolean;
  inheritPolicies: boolean;
  inheritTags: boolean;
}
export interface TypeRestrictionFields {
  description: string | null;
  allowedTypeNames: string[];
  deniedTypeNames: string[];
  includeSubTypes: boolean;
}

export interface PolicyRecord {
  id: string;
  technicalName: string;
  name: string;
  kind: PolicyKind;
  fields: DefaultTypeFields | InheritanceFields | TypeRestrictionFields;
  createdAt: Date;
  createdBy: string;
}

interface PolicyRow {
  id: string;
  technical_name: string;
  name: string;
  kind: PolicyKind;
  fields: PolicyRecord['fields'];
  created_at: Date | string;
  created_by: string;
}

export const toPolicyRecord = (row: PolicyRow): PolicyRecord => ({
  id: row.id,
  technicalName: row.technical_name,
  name: row.name,
  kind: row.kind,
  fields: row.fields,
  createdAt: new Date(row.created_at),
  createdBy: row.created_by,
});

const technicalNamePattern = /^[A-Za-z0-9._-]{1,128}$/;

async function unknownTypes(em: EntityManager, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const known = await em.getConnection().execute<{ name: string }[]>('select name from content_type where name in (select jsonb_array_elements_text(?::jsonb))', [JSON.stringify(names)]);
  return names.filter((name) => !known.some((row) => row.name === name));
}

async function requireTypes(em: EntityManager, field: string, names: readonly string[]): Promise<void> {
  const unknown = await unknownTypes(em, names);
  if (unknown.length > 0) throw illegalArguments(`${field}: unknown type ${unknown.map((n) => `'${n}'`).join(', ')} (register it with POST A/type)`);
}

/** What every policy is called: `name` 1 to 255 characters; `technicalName` (unique) defaults to the name. */
interface PolicyNames {
  name: string;
  technicalName?: string | null;
}

export interface CreateDefaultTypePolicyInput extends PolicyNames {
  /** any type name, as contents carry them */
  defaultTypeName: string;
}

/** Each flag defaults to true. */
export interface CreateInheritancePolicyInput extends PolicyNames {
  inheritAcl?: boolean | null;
  inheritClassification?: boolean | null;
  inheritCommonProperties?: boolean | null;
  inheritPolicies?: boolean | null;
  inheritTags?: boolean | null;
}

/** At least one of the two lists; `includeSubTypes` defaults to true. */
export interface CreateTypeRestrictionPolicyInput extends PolicyNames {
  description?: string | null;
  allowedTypeNames?: string[] | null;
  deniedTypeNames?: string[] | null;
  includeSubTypes?: boolean | null;
}

async function insertPolicy(em: EntityManager, actor: Principal, input: PolicyNames, kind: PolicyKind, fields: PolicyRecord['fields']): Promise<PolicyRecord> {
  const name = input.name.trim();
  if (name === '' || name.length > 255) throw illegalArguments('name: 1 to 255 characters');
  const technicalName = input.technicalName?.trim() || name;
  if (!technicalNamePattern.test(technicalName)) throw illegalArguments(`technicalName '${technicalName}': 1 to 128 letters, digits or . _ - (give technicalName when the name has other characters)`);
  try {
    return await em.transactional(async (tx) => {
      const [row] = await tx.execute<PolicyRow[]>(
        'insert into policy (id, technical_name, name, kind, fields, created_at, created_by) values (?, ?, ?, ?, ?::jsonb, now(), ?) returning *',
        [randomUUID(), technicalName, name, kind, JSON.stringify(fields), actor.userName],
      );
      await recordEvent(tx as EntityManager, { type: 'POLICY_CREATED', actor: actor.userName, details: { policyId: row!.id, technicalName, kind } });
      return toPolicyRecord(row!);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`a policy with the technical name '${technicalName}' exists`);
    throw error;
  }
}

/*
 * Policies name types as contents carry them: any type name, registered (POST A/type) or not — the
 * spec has no type registry, and a fresh installation has none. A rule matches a type by its name, and
 * `includeSubTypes` reads the registry when the rule is checked (folder-policies.ts), so types
 * registered later are subtypes from then on.
 */

/** Spec endpoint 6. */
export async function createDefaultTypePolicy(em: EntityManager, actor: Principal, input: CreateDefaultTypePolicyInput): Promise<PolicyRecord> {
  const defaultTypeName = validateTypeName(input.defaultTypeName, 'defaultTypeName');
  if (!defaultTypeName) throw illegalArguments('defaultTypeName: a type name is required');
  return insertPolicy(em, actor, input, 'DEFAULT_TYPE', { defaultTypeName });
}

/** Spec endpoint 7: every flag defaults to true. */
export async function createInheritancePolicy(em: EntityManager, actor: Principal, input: CreateInheritancePolicyInput): Promise<PolicyRecord> {
  return insertPolicy(em, actor, input, 'INHERITANCE', {
    inheritAcl: input.inheritAcl ?? true,
    inheritClassification: input.inheritClassification ?? true,
    inheritCommonProperties: input.inheritCommonProperties ?? true,
    inheritPolicies: input.inheritPolicies ?? true,
    inheritTags: input.inheritTags ?? true,
  });
}

/** Spec endpoint 8. */
export async function createTypeRestrictionPolicy(em: EntityManager, actor: Principal, input: CreateTypeRestrictionPolicyInput): Promise<PolicyRecord> {
  // an empty value (a form's `deniedTypeNames=`) names no type
  const typeNames = (field: string, names: readonly string[] | null | undefined) =>
    [...new Set((names ?? []).map((name) => validateTypeName(name, field)).filter((name): name is string => !!name))];
  const allowedTypeNames = typeNames('allowedTypeNames', input.allowedTypeNames);
  const deniedTypeNames = typeNames('deniedTypeNames', input.deniedTypeNames);
  if (allowedTypeNames.length === 0 && deniedTypeNames.length === 0) throw illegalArguments('allowedTypeNames or deniedTypeNames: at least one type');
  const both = allowedTypeNames.filter((name) => deniedTypeNames.includes(name));
  if (both.length > 0) throw illegalArguments(`a type is either allowed or denied, not both: ${both.map((name) => `'${name}'`).join(', ')}`);
  return insertPolicy(em, actor, input, 'TYPE_RESTRICTION', {
    description: input.description ?? null,
    allowedTypeNames,
    deniedTypeNames,
    includeSubTypes: input.includeSubTypes ?? true,
  });
}

export async function listPolicies(em: EntityManager): Promise<PolicyRecord[]> {
  return (await em.getConnection().execute<PolicyRow[]>('select * from policy order by technical_name')).map(toPolicyRecord);
}

/** A policy in effect in a folder: what `policyAssignments` lists (assignPolicy puts it there). */
export interface PolicyAssignmentRecord {
  policyId: string;
  repositoryId: string;
  folderId: string;
  folderName: string;
}

/** Every assignment, or a repository's, by folder name then policy: one query. */
export async function listPolicyAssignments(em: EntityManager, repositoryId?: string | null): Promise<PolicyAssignmentRecord[]> {
  const only = repositoryId ? repositoryIdOf(repositoryNameOfId(repositoryId)) : null;
  const rows = await em.getConnection().execute<{ policy_id: string; repository_id: string; folder_id: string; folder_name: string }[]>(
    `select a.policy_id, a.repository_id, a.folder_id, e.name as folder_name
       from policy_assignment a join entry e on e.id = a.folder_id join policy p on p.id = a.policy_id
      where ?::text is null or a.repository_id = ?
      order by e.name, p.technical_name`,
    [only, only],
  );
  return rows.map((row) => ({ policyId: row.policy_id, repositoryId: row.repository_id, folderId: row.folder_id, folderName: row.folder_name }));
}

/**
 * Spec endpoint 9. By ids or technical names, all or nothing: one unknown is a 404 and nothing is
 * deleted. An empty list of technical names deletes every custom policy (all policies are custom:
 * the service ships none). Their folder assignments go with them.
 */
export async function deletePolicies(em: EntityManager, actor: Principal, by: { ids: readonly string[] } | { technicalNames: readonly string[] }): Promise<number> {
  const column = 'ids' in by ? 'id' : 'technical_name';
  const keys = [...new Set('ids' in by ? by.ids : by.technicalNames)];
  return em.transactional(async (tx) => {
    const connection = tx.getConnection();
    const context = tx.getTransactionContext();
    if (keys.length === 0 && 'ids' in by) throw illegalArguments('policy ids: at least one (REST policyIds, GraphQL ids)');
    const deleted = await connection.execute<{ id: string; technical_name: string; key: string }[]>(
      `delete from policy where ? or ${column} in (select jsonb_array_elements_text(?::jsonb)) returning id, technical_name, ${column} as key`,
      [keys.length === 0, JSON.stringify(keys)], 'all', context);
    const missing = keys.filter((key) => !deleted.some((row) => row.key === key));
    if (missing.length > 0) throw notFound(`no policy with ${'ids' in by ? 'id' : 'technical name'} ${missing.map((k) => `'${k}'`).join(', ')}`);
    // one event per policy: each is a change of its own
    for (const row of deleted) {
      await recordEvent(tx as EntityManager, { type: 'POLICY_DELETED', actor: actor.userName, details: { policyId: row.id, technicalName: row.technical_name } });
    }
    return deleted.length;
  });
}

/** `POST A/policy/assignment`: the policy takes effect in the folder (and, as inheritance allows, below it). */
export async function assignPolicy(em: EntityManager, actor: Principal, input: { policyId: string; repositoryId: string; folderId: string }, assign: boolean): Promise<void> {
  const repositoryId = repositoryIdOf(repositoryNameOfId(input.repositoryId));
  const folder = await em.findOne(Entry, { id: input.folderId, repositoryId, entryType: 'FOLDER' });
  if (!folder) throw notFound(`folder '${input.folderId}' not found in repository '${input.repositoryId}'`);
  const connection = em.getConnection();
  const [policy] = await connection.execute<PolicyRow[]>('select * from policy where id = ?', [input.policyId]);
  if (!policy) throw notFound(`policy '${input.policyId}' not found`);
  const recordAssignment = (tx: EntityManager) =>
    recordEvent(tx, {
      type: assign ? 'POLICY_ASSIGNED' : 'POLICY_UNASSIGNED',
      actor: actor.userName,
      repository: { id: repositoryId, name: repositoryNameOfId(input.repositoryId) },
      entryId: folder.id,
      chronicalId: folder.chronicalId,
      details: { policyId: policy.id, technicalName: policy.technical_name },
    });
  if (!assign) {
    await em.transactional(async (tx) => {
      const removed = await tx.execute('delete from policy_assignment where policy_id = ? and folder_id = ? returning policy_id', [input.policyId, folder.id]);
      if (removed.length === 0) throw notFound(`policy '${input.policyId}' is not assigned to folder '${folder.id}'`);
      await recordAssignment(tx as EntityManager);
    });
    return;
  }
  // one policy of a kind per folder: a second default type or inheritance policy would be ambiguous
  const [sameKind] = await connection.execute<{ policy_id: string }[]>(
    `select a.policy_id from policy_assignment a join policy p on p.id = a.policy_id where a.folder_id = ? and p.kind = ? and p.kind <> 'TYPE_RESTRICTION' and a.policy_id <> ?`,
    [folder.id, policy.kind, policy.id],
  );
  if (sameKind) throw conflict(`folder '${folder.name}' already has a ${policy.kind} policy ('${sameKind.policy_id}')`);
  try {
    await em.transactional(async (tx) => {
      const inserted = await tx.execute('insert into policy_assignment (policy_id, folder_id, repository_id) values (?, ?, ?) on conflict do nothing returning policy_id', [policy.id, folder.id, repositoryId]);
      // assigned already: nothing changed
      if (inserted.length > 0) await recordAssignment(tx as EntityManager);
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound('the policy or the folder was deleted meanwhile');
    throw error;
  }
}

/** `POST A/type`: a content type, optionally below a parent type (subtypes for `includeSubTypes`). */
/** A new type of the registry, a subtype of `parentTypeName` when given. */
export interface CreateContentTypeInput {
  name: string;
  parentTypeName?: string | null;
}

export async function createContentType(em: EntityManager, input: CreateContentTypeInput): Promise<{ name: string; parentTypeName: string | null }> {
  const name = input.name.trim();
  if (!/^[A-Za-z0-9:._-]{1,128}$/.test(name)) throw illegalArguments('name: 1 to 128 letters, digits or : . _ -');
  if (input.parentTypeName) await requireTypes(em, 'parentTypeName', [input.parentTypeName]);
  try {
    await em.getConnection().execute('insert into content_type (name, parent_name) values (?, ?)', [name, input.parentTypeName || null]);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`type '${name}' exists`);
    throw error;
  }
  return { name, parentTypeName: input.parentTypeName || null };
}

export async function listContentTypes(em: EntityManager): Promise<{ name: string; parentTypeName: string | null }[]> {
  const rows = await em.getConnection().execute<{ name: string; parent_name: string | null }[]>('select name, parent_name from content_type order by name');
  return rows.map((row) => ({ name: row.name, parentTypeName: row.parent_name }));
}
