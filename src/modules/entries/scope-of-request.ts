import type { RequestContext } from '../../context.js';
import { BatchLoader } from '../../graphql/batch-loader.js';
import { findRepositoryByName } from '../repositories/operations.js';
import type { Entry, Resource } from './entry.entity.js';
import { loadEntries, loadResources } from './queries.js';
import type { EntryScope } from './scope.js';

interface RequestState {
  scopes: Map<string, Promise<EntryScope>>;
  entries: BatchLoader<string, Entry>;
  resources: BatchLoader<string, Resource>;
}

const states = new WeakMap<RequestContext, RequestState>();

function stateOf(context: RequestContext): RequestState {
  let state = states.get(context);
  if (!state) {
    state = {
      scopes: new Map(),
      entries: new BatchLoader((ids) => loadEntries(context, ids)),
      resources: new BatchLoader((ids) => loadResources(context, ids)),
    };
    states.set(context, state);
  }
  return state;
}

/** The caller and the named repository, resolved once per request. */
export function entryScope(context: RequestContext, repositoryName: string): Promise<EntryScope> {
  const { scopes } = stateOf(context);
  let scope = scopes.get(repositoryName);
  if (!scope) {
    scope = (async () => {
      const principal = await context.principal();
      const repository = await findRepositoryByName(context.em, repositoryName);
      return { em: context.em, services: context.services, principal, repository, logger: context.logger.child({ user: principal.userName }) };
    })();
    scopes.set(repositoryName, scope);
  }
  return scope;
}

/** Batched lookups for nested fields (parent, predecessor, resource) within one request. */
export const loadEntry = (context: RequestContext, id: string) => stateOf(context).entries.load(id);
export const loadResource = (context: RequestContext, id: string) => stateOf(context).resources.load(id);
