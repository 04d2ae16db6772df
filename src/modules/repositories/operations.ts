import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, illegalArguments, isUniqueViolation, notFound } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import { Repository, type RepositoryLimits } from './repository.entity.js';

export const repositoryNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Ids and partitions are derived from the repository name (DESIGN §0). */
export const repositoryIdOf = (name: string) => `svc.repository.${name}`;
export const repositoryNameOf = (repositoryId: string) => repositoryId.slice('svc.repository.'.length);
export const partitionOf = (repositoryId: string) => `access.svc.content.${repositoryNameOf(repositoryId)}`;

/** What operations read of a repository: a snapshot, not a managed entity. */
export type RepositoryRecord = Readonly<Pick<Repository, 'id' | 'name' | 'technicalName' | 'type' | 'fullTextEnabled' | 'limits' | 'createdAt' | 'createdBy' | 'modifiedAt' | 'modifiedBy'>>;

/**
 * Repositories read in the last few seconds, by name: every call of the content domain names its
 * repository, and they change rarely. Changes in this process forget the record at once
 * (forgetRepository); other processes see them within the time to live.
 */
const recentRecords = new Map<string, { record: RepositoryRecord; until: number }>();
const recordTtlMs = 5_000;

export function forgetRepository(name: string): void {
  recentRecords.delete(name);
}

export async function findRepositoryByName(em: EntityManager, name: string): Promise<RepositoryRecord> {
  if (!repositoryNamePattern.test(name)) throw illegalArguments(`repository name '${name}' is not valid`);
  const now = Date.now();
  const cached = recentRecords.get(name);
  if (cached && cached.until > now) return cached.record;
  const repository = await em.findOne(Repository, { id: repositoryIdOf(name) });
  if (!repository) throw notFound(`repository '${name}' not found`);
  const { id, technicalName, type, fullTextEnabled, limits, createdAt, createdBy, modifiedAt, modifiedBy } = repository;
  const record = Object.freeze({ id, name, technicalName, type, fullTextEnabled, limits, createdAt, createdBy, modifiedAt, modifiedBy });
  recentRecords.set(name, { record, until: now + recordTtlMs });
  return record;
}

export async function createRepository(
  em: EntityManager,
  actor: Principal,
  input: { name: string; technicalName?: string; fullTextEnabled?: boolean; limits?: RepositoryLimits },
): Promise<Repository> {
  if (!repositoryNamePattern.test(input.name)) throw illegalArguments('name: 1 to 64 letters, digits, _ or -');
  const now = new Date();
  const repository = em.create(Repository, {
    id: repositoryIdOf(input.name),
    name: input.name,
    technicalName: input.technicalName ?? input.name,
    type: 'STANDARD',
    fullTextEnabled: input.fullTextEnabled ?? true,
    limits: input.limits ?? {},
    createdAt: now,
    createdBy: actor.userName,
    modifiedAt: now,
    modifiedBy: actor.userName,
  });
  try {
    await em.flush();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`a repository named '${input.name}' exists`);
    throw error;
  }
  return repository;
}

/** The default repository is created on the first start, when no repository exists (DESIGN §2). */
export async function ensureDefaultRepository(em: EntityManager, name: string, owner: string): Promise<void> {
  if ((await em.count(Repository, {})) > 0) return;
  await createRepository(em, { userName: owner, roles: ['ADMIN'] }, { name });
}
