import type { RequestContext } from '../../context.js';
import { readableParent, readPredecessors } from '../entries/read.js';
import type { EntryScope } from '../entries/scope.js';
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
 * predecessor with its readable parent and its resource (the page's predecessors read by one
 * statement). Running a page of 100 entries through GraphQL cost about twice the node CPU of reading
 * it (docs/benchmarks.md); test/rest/search-direct.test.ts holds both to the same answers.
 */
export async function entriesPageView(context: RequestContext, scope: EntryScope, page: EntriesPage): Promise<EntriesPageView> {
  const basePath = context.services.config.BASE_PATH;
  const predecessorIds = page.entries.flatMap((entry) => (entry.entryType === 'CONTENT' && entry.predecessorId ? [entry.predecessorId] : []));
  const predecessors = await readPredecessors(scope, [...new Set(predecessorIds)]);
  const entries = await Promise.all(
    page.entries.map(async (entry) => {
      const predecessor = entry.entryType === 'CONTENT' && entry.predecessorId ? (predecessors.get(entry.predecessorId) ?? null) : null;
      const parent = await readableParent(scope, entry.preloaded.parent);
      return entryView(Object.assign(entry, { preloaded: { parent, resource: entry.preloaded.resource, predecessor } }), basePath);
    }),
  );
  return { count: page.count, duration: page.duration, entries };
}
