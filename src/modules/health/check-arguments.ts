import { ArgsType, Field, ID } from 'type-graphql';
import type { RequestContext } from '../../context.js';
import { illegalArguments } from '../../errors.js';
import type { RepositoryKey } from '../repositories/operations.js';

/**
 * Checks run once per request and key, however many aliases ask for them (alias amplification would
 * otherwise multiply storage probes, database round trips — and whole deep checks — by the aliases in one query).
 */
const runsOfRequest = new WeakMap<RequestContext, Map<string, Promise<unknown>>>();

export function oncePerRequest<T>(context: RequestContext, key: string, run: () => Promise<T>): Promise<T> {
  let runs = runsOfRequest.get(context);
  if (!runs) runsOfRequest.set(context, (runs = new Map()));
  let result = runs.get(key) as Promise<T> | undefined;
  if (!result) runs.set(key, (result = run()));
  return result;
}

/** The spec's three ways of naming the repository of a check (endpoints 10–12): exactly one of them. */
@ArgsType()
export class RepositoryKeyArgs {
  @Field(() => ID, { nullable: true, description: 'svc.repository.<name>; give exactly one of repositoryId, repositoryName and repositoryTechnicalName' }) repositoryId?: string | null;
  @Field(() => String, { nullable: true, description: "the repository's name; give exactly one of repositoryId, repositoryName and repositoryTechnicalName" }) repositoryName?: string | null;
  @Field(() => String, { nullable: true, description: "the repository's technical name; give exactly one of repositoryId, repositoryName and repositoryTechnicalName" }) repositoryTechnicalName?: string | null;
}

export function repositoryKey({ repositoryId, repositoryName, repositoryTechnicalName }: RepositoryKeyArgs): RepositoryKey {
  const given = [repositoryId, repositoryName, repositoryTechnicalName].filter((value) => value !== undefined && value !== null);
  if (given.length !== 1) throw illegalArguments('give one of repositoryId, repositoryName, repositoryTechnicalName');
  if (repositoryId) return { repositoryId };
  if (repositoryName) return { repositoryName };
  return { repositoryTechnicalName: repositoryTechnicalName! };
}
