import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict, illegalArguments, isUniqueViolation, notFound } from '../../errors.js';
import type { Principal } from '../auth/principal.js';
import { Repository, type RepositoryLimits } from './repository.entity.js';

export const repositoryNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Ids and partitions are derived from the repository name (DESIGN §0). */
export const repositoryIdOf = (name: string) => `svc.repository.${name}`;
export const partitionOf = (repositoryId: string) => `access.svc.content.${repositoryId.slice('svc.repository.'.length)}`;

/**
 * Repository rows read in the last few seconds, by name: every call of the content domain names its
 * repository, and they change rarely. Changes in this process forget the row at once (forgetRepository);
 * other processes see them within the time to live.
 */
const recentRows = new Map<string, { row: Record<string, unknown>; until: number }>();
const rowTtlMs = 5_000;

export function forgetRepository(name: string): void {
  recentRows.delete(name);
}

export async function findRepositoryByName(em: EntityManager, name: string): Promise<Repository> {
  if (!repositoryNamePattern.test(name)) throw illegalArguments(`repository name '${name}' is not valid`);
  const now = Date.now();
  let cached = recentRows.get(name);
  if (!cached || cached.until <= now) {
    const [row] = await em.getConnection().execute<Record<string, unknown>[]>('select * from repository where id = ?', [repositoryIdOf(name)]);
    if (!row) throw notFound(`repository '${name}' not found`);
    cached = { row, until: now + rowTtlMs };
    recentRows.set(name, cached);
  }
  // a managed entity of this unit of work, made from the row without a query
  return em.map(Repository, { ...cached.row });
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
