import type { RequestContext } from '../../context.js';
import { readableParent, type EntryRead } from '../entries/read.js';
import type { EntryScope } from '../entries/scope.js';
import { loadEntry, loadResource } from '../entries/scope-of-request.js';
import { entryView } from '../entries/views.js';
import type { EntriesPage } from './entry-query.js';

/** A page of a search as the API shows it: each entry as `entryView` shows it. */
export interface EntriesPageView {
  count: number;
  duration: number;
  entries: Record<string, unknown>[];
}

/**
 * A search's page as its GraphQL document shows it (rest-compat/operations/fragments.graphql,
 * `EntriesPageFields` without `children`), for REST's searches that call their verb directly
 * (docs/api.md, "Hot reads"): each entry as `entryView` shows it, with what the GraphQL field
 * resolvers add (entries.resolver.ts) — the parent only when the caller may read it, and a content's
 * predecessor loaded as the predecessor resolver loads it, with its readable parent and its resource.
 * Running a page of 100 entries through GraphQL cost about twice the node CPU of reading it
 * (docs/benchmarks.md); test/rest/search-direct.test.ts holds both to the same answers.
 */
export async function entriesPageView(context: RequestContext, scope: EntryScope, page: EntriesPage): Promise<EntriesPageView> {
  const basePath = context.services.config.BASE_PATH;
  const predecessorOf = async (id: string | null | undefined): Promise<EntryRead | null> => {
    const predecessor = id ? ((await loadEntry(context, id)) ?? null) : null;
    if (!predecessor) return null;
    const [parent, resource] = await Promise.all([
      readableParent(scope, predecessor.parentId ? await loadEntry(context, predecessor.parentId) : null),
      predecessor.resourceId ? loadResource(context, predecessor.resourceId) : null,
    ]);
    // the entity's fields read through the prototype, as the GraphQL types read them
    return Object.assign(Object.create(predecessor) as EntryRead, { preloaded: { parent, resource: resource ?? null } });
  };
  const entries = await Promise.all(
    page.entries.map(async (entry) => {
      const [parent, predecessor] = await Promise.all([readableParent(scope, entry.preloaded.parent), entry.entryType === 'CONTENT' ? predecessorOf(entry.predecessorId) : null]);
      return entryView(Object.assign(entry, { preloaded: { parent, resource: entry.preloaded.resource, predecessor } }), basePath);
    }),
  );
  return { count: page.count, duration: page.duration, entries };
}
