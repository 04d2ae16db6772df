import type { RequestContext } from '../../context.js';
import DataLoader from 'dataloader';
import type { Logger } from '../../logger.js';
import { thumbnailsOf } from '../conversion/thumbnails.js';
import type { Entry, Resource } from './entry.entity.js';
import { loadEntries, loadResources } from './queries.js';
import type { EntryScope } from './scope.js';

interface RequestState {
  scopes: Map<string, Promise<EntryScope>>;
  entries: DataLoader<string, Entry | undefined>;
  resources: DataLoader<string, Resource | undefined>;
  thumbnails: DataLoader<string, true | undefined>;
}

/**
 * Collects the ids asked for in one tick and loads them with one query (no N+1 on lists). No cache:
 * the unit of work is the request's cache already, and a cached row would outlive a mutation in the
 * same request.
 */
function batchedById<V>(loadMany: (ids: readonly string[]) => Promise<Map<string, V>>): DataLoader<string, V | undefined> {
  return new DataLoader(async (ids) => {
    const found = await loadMany(ids);
    return ids.map((id) => found.get(id));
  }, { cache: false });
}

const states = new WeakMap<RequestContext, RequestState>();

function stateOf(context: RequestContext): RequestState {
  let state = states.get(context);
  if (!state) {
    state = {
      scopes: new Map(),
      entries: batchedById((ids) => loadEntries(context, ids)),
      resources: batchedById((ids) => loadResources(context, ids)),
      thumbnails: batchedById(async (ids) => new Map((await thumbnailsOf(context.em, ids)).map((id) => [id, true as const]))),
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
      const repository = await context.services.repositories.find(context, repositoryName);
      let logger: Logger | undefined;
      return {
        // the request's, made when first used (context.ts)
        get em() {
          return context.em;
        },
        services: context.services,
        principal,
        repository,
        // made when first used, as the request's (context.ts)
        get logger() {
          return (logger ??= context.logger.child({ user: principal.userName }));
        },
      };
    })();
    scopes.set(repositoryName, scope);
  }
  return scope;
}

/** Batched lookups for nested fields (parent, predecessor, resource, whether a thumbnail is made) within one request. */
export const loadEntry = (context: RequestContext, id: string) => stateOf(context).entries.load(id);
export const loadResource = (context: RequestContext, id: string) => stateOf(context).resources.load(id);
export const hasThumbnail = async (context: RequestContext, contentId: string) => (await stateOf(context).thumbnails.load(contentId)) === true;
