import { defaultRootAcl } from '../access/acl.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { conflict, illegalArguments, isUniqueViolation, notFound } from '../../errors.js';
import type { Config } from '../../config.js';
import type { Services } from '../../context.js';
import { parseInput } from '../auth/names.js';
import type { Principal } from '../auth/principal.js';
import { Entry } from '../entries/entry.entity.js';
import { recordEvent } from '../events/record.js';
import { conversionLimits, conversionStrategies, Repository, type RepositoryLimits } from './repository.entity.js';

export const repositoryNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Ids and partitions are derived from the repository name (DESIGN §0). */
export const repositoryIdOf = (name: string) => `svc.repository.${name}`;
export const repositoryNameOf = (repositoryId: string) => repositoryId.slice('svc.repository.'.length);

/** The name inside a `repositoryId` the client sent; anything but `svc.repository.<name>` is a 400. */
export function repositoryNameOfId(repositoryId: string): string {
  const name = repositoryNameOf(repositoryId);
  if (!repositoryId.startsWith('svc.repository.') || !repositoryNamePattern.test(name)) {
    throw illegalArguments(`repositoryId '${repositoryId}' is not valid: svc.repository.<name>`);
  }
  return name;
}
export const partitionOf = (repositoryId: string) => `access.svc.content.${repositoryNameOf(repositoryId)}`;

/** What operations read of a repository: a snapshot, not a managed entity. */
export type RepositoryRecord = Readonly<Pick<Repository, 'id' | 'name' | 'technicalName' | 'type' | 'fullTextEnabled' | 'limits' | 'createdAt' | 'createdBy' | 'modifiedAt' | 'modifiedBy' | 'acl'>>;

/** Postgres channel on which a trigger announces the name of each repository changed or deleted (any process, any statement). */
export const repositoryChangedChannel = 'repository_changed';

/** The repository as stored now, not as cached: for jobs, which run well after the request that started them. */
export async function currentRepository(em: EntityManager, name: string): Promise<RepositoryRecord> {
  if (!repositoryNamePattern.test(name)) throw illegalArguments(`repository name '${name}' is not valid`);
  const repository = await em.findOne(Repository, { id: repositoryIdOf(name) }, { refresh: true });
  if (!repository) throw notFound(`repository '${name}' not found`);
  const { id, technicalName, type, fullTextEnabled, limits, createdAt, createdBy, modifiedAt, modifiedBy, acl } = repository;
  return Object.freeze({ id, name, technicalName, type, fullTextEnabled, limits, createdAt, createdBy, modifiedAt, modifiedBy, acl });
}

/** Limits as a client sends them: null or absent = not set (the conversion limit applies); their bounds depend on the configuration (`checkLimits`). */
const limitsInputSchema = z.object({
  maxNumberOfInputFiles: z.number().nullish(),
  maxInputFileSize: z.number().nullish(),
  maxTotalInputFileSize: z.number().nullish(),
  conversionLimit: z.enum(conversionLimits).nullish(),
  conversionStrategy: z.enum(conversionStrategies).nullish(),
});
export type LimitsInput = z.input<typeof limitsInputSchema>;

function checkedLimits(config: Config, input: LimitsInput): RepositoryLimits {
  const limits = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined && value !== null)) as RepositoryLimits;
  checkLimits(config, limits);
  return limits;
}

/**
 * The spec: repository limits must be lower than the conversion limits (CONV_MAX_*); equal is
 * accepted, as a repository limit that only repeats the conversion limit changes nothing.
 */
export function checkLimits(config: Config, limits: RepositoryLimits): void {
  const ceilings: [keyof RepositoryLimits, number, string][] = [
    ['maxNumberOfInputFiles', config.CONV_MAX_NUMBER_OF_INPUT_FILES, 'CONV_MAX_NUMBER_OF_INPUT_FILES'],
    ['maxInputFileSize', config.CONV_MAX_INPUT_FILE_SIZE, 'CONV_MAX_INPUT_FILE_SIZE'],
    ['maxTotalInputFileSize', config.CONV_MAX_TOTAL_INPUT_FILE_SIZE, 'CONV_MAX_TOTAL_INPUT_FILE_SIZE'],
  ];
  for (const [field, ceiling, setting] of ceilings) {
    const value = limits[field] as number | undefined;
    // a count of files or of bytes: zero, negative or fractional would refuse every conversion
    // above the ceiling first: 1e20 is a whole number, only too large to be one exactly
    if (value !== undefined && value > ceiling) throw illegalArguments(`${field}: ${value} is above the conversion limit ${setting} (${ceiling})`);
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) throw illegalArguments(`${field}: ${value} is not a whole number above 0`);
  }
  // a total below the size one file may have would refuse files that limit lets through
  const { maxInputFileSize: single, maxTotalInputFileSize: total } = limits;
  if (single !== undefined && total !== undefined && total < single) {
    throw illegalArguments(`maxTotalInputFileSize: ${total} is below maxInputFileSize (${single}): the files of one conversion together may not be smaller than one of them`);
  }
}

const repositoryNameInput = z.string().regex(repositoryNamePattern, '1 to 64 letters, digits, _ or -');

/** A new repository: `technicalName` defaults to the name, `fullTextEnabled` to true, `limits` to none. */
const createRepositoryInputSchema = z.object({
  name: repositoryNameInput,
  technicalName: repositoryNameInput.nullish(),
  fullTextEnabled: z.boolean().nullish(),
  limits: limitsInputSchema.nullish(),
});
export type CreateRepositoryInput = z.input<typeof createRepositoryInputSchema>;

export async function createRepository(em: EntityManager, config: Config, actor: Principal, given: CreateRepositoryInput): Promise<Repository> {
  const input = parseInput(createRepositoryInputSchema, given);
  const limits = checkedLimits(config, input.limits ?? {});
  const now = new Date();
  const fields = {
    id: repositoryIdOf(input.name),
    name: input.name,
    technicalName: input.technicalName ?? input.name,
    type: 'STANDARD',
    fullTextEnabled: input.fullTextEnabled ?? true,
    limits,
    createdAt: now,
    createdBy: actor.userName,
    modifiedAt: now,
    modifiedBy: actor.userName,
    acl: defaultRootAcl,
  };
  try {
    return await em.transactional(async (tx) => {
      const repository = tx.create(Repository, fields);
      await tx.flush();
      await recordEvent(tx as EntityManager, { type: 'REPOSITORY_CREATED', actor: actor.userName, repository, details: { technicalName: repository.technicalName } });
      return repository;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`a repository named '${input.name}' or with the technical name '${fields.technicalName}' exists (names are unique whatever their case)`);
    throw error;
  }
}

/** A repository named by one of the spec's three keys (connection check, deep check, statistics). */
export type RepositoryKey = { repositoryId: string } | { repositoryName: string } | { repositoryTechnicalName: string };

export async function findRepository(services: Pick<Services, 'repositories'>, em: EntityManager, key: RepositoryKey): Promise<RepositoryRecord> {
  if ('repositoryId' in key) return services.repositories.find({ em }, repositoryNameOfId(key.repositoryId));
  if ('repositoryName' in key) return services.repositories.find({ em }, key.repositoryName);
  // the name only: the record itself comes through the cache, like the other two keys
  const [found] = await em.execute<{ name: string }[]>('select name from repository where technical_name = ?', [key.repositoryTechnicalName]);
  if (!found) throw notFound(`no repository with the technical name '${key.repositoryTechnicalName}'`);
  return services.repositories.find({ em }, found.name);
}

export async function listRepositories(em: EntityManager): Promise<Repository[]> {
  return em.find(Repository, {}, { orderBy: { name: 'asc' } });
}

async function repositoryById(em: EntityManager, repositoryId: string): Promise<Repository> {
  const name = repositoryNameOfId(repositoryId);
  const repository = await em.findOne(Repository, { id: repositoryIdOf(name) });
  if (!repository) throw notFound(`repository '${repositoryId}' not found`);
  return repository;
}

/** `fullTextEnabled` absent or null: unchanged. */
const updateRepositoryLimitsInputSchema = limitsInputSchema.extend({ fullTextEnabled: z.boolean().nullish() });
export type UpdateRepositoryLimitsInput = z.input<typeof updateRepositoryLimitsInputSchema>;

/**
 * `PATCH A/repository/limits`, as a PATCH reads: a limit given replaces the stored one, `null` unsets
 * it (the conversion limit applies), an absent one stays; `fullTextEnabled` changes when given.
 */
export async function updateRepositoryLimits(
  { config, repositories }: Pick<Services, 'config' | 'repositories'>,
  em: EntityManager,
  actor: Principal,
  repositoryId: string,
  input: UpdateRepositoryLimitsInput,
): Promise<Repository> {
  const { fullTextEnabled, ...given } = parseInput(updateRepositoryLimitsInputSchema, input);
  // an input object may hold absent fields as undefined properties: only given ones (values or null) count
  const changes = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  const repository = await em.transactional(async (tx) => {
    const repository = await repositoryById(tx as EntityManager, repositoryId);
    repository.limits = checkedLimits(config, { ...repository.limits, ...changes });
    if (fullTextEnabled !== undefined && fullTextEnabled !== null) repository.fullTextEnabled = fullTextEnabled;
    repository.modifiedAt = new Date();
    repository.modifiedBy = actor.userName;
    await tx.flush();
    await recordEvent(tx as EntityManager, { type: 'REPOSITORY_UPDATED', actor: actor.userName, repository, details: { limits: repository.limits, fullTextEnabled: repository.fullTextEnabled } });
    return repository;
  });
  repositories.forget(repository.name);
  return repository;
}

/** A repository that still holds folders or contents is not deleted (409), as a folder that is not empty. */
export async function deleteRepository({ repositories }: Pick<Services, 'repositories'>, em: EntityManager, actor: Principal, repositoryId: string): Promise<void> {
  const repository = await repositoryById(em, repositoryId);
  if ((await em.count(Entry, { repositoryId: repository.id })) > 0) {
    throw conflict(`repository '${repository.name}' is not empty: delete its folders and contents first`);
  }
  await em.transactional(async (tx) => {
    await tx.nativeDelete(Repository, { id: repository.id });
    await recordEvent(tx as EntityManager, { type: 'REPOSITORY_DELETED', actor: actor.userName, repository });
  });
  repositories.forget(repository.name);
}

/** The default repository is created on the first start, when no repository exists (DESIGN §2). */
export async function ensureDefaultRepository(em: EntityManager, config: Config, name: string, owner: string): Promise<void> {
  if ((await em.count(Repository, {})) > 0) return;
  await createRepository(em, config, { userName: owner, roles: ['ADMIN'], groups: [] }, { name });
}
