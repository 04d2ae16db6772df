import type { RequestContext } from '../../src/context.js';
import { entryScope, entryView, type EntryRead, type EntryScope } from '../../src/modules/entries/index.js';
import type { EntriesPageView } from '../../src/modules/search/index.js';
import type { EntriesPageFieldsFragment } from '../operations/documents.generated.js';
import type { Reply } from '../route.js';
import { withRestDates } from '../shapes/dates.js';
import { entriesResponse, entryShape, type Projection } from '../shapes/entries.js';

/** A Folder or Content in the spec's shape (201 when the call created it): a document's result, or what `readById` read. */
export const entryReply = ({ result }: { result: Record<string, unknown> }): Reply => ({ body: entryShape(result) });
export const createdEntryReply = (data: { result: Record<string, unknown> }): Reply => ({ status: 201, ...entryReply(data) });
export const noContentReply = (): Reply => ({ status: 204 });
/** A record of the administration domain (no REST shape of its own): the GraphQL result as the body, dates in the REST form. */
export const recordReply = ({ result }: { result: unknown }): Reply => ({ body: withRestDates(result) });
export const createdRecordReply = (data: { result: unknown }): Reply => ({ status: 201, ...recordReply(data) });

/** An EntriesResponse, projected as the search parameters ask. */
export const pageReply = ({ result }: { result: EntriesPageFieldsFragment | EntriesPageView }, { query }: { query: Projection }): Reply => ({
  body: entriesResponse(result, query),
});

/** The repository and id in the path of a call on one entry. */
export const byId = ({ params }: { params: Record<string, string> }) => ({ repository: params.repository!, id: params.id! });

/**
 * The entry of the path's id, read by `read` (a read verb of the entries module, the one GraphQL's
 * query calls) and seen as the API shows it, where a document's `result` would be (operationRoute).
 */
export const readById =
  (read: (scope: EntryScope, id: string) => Promise<EntryRead>) =>
  async (context: RequestContext, { params }: { params: Record<string, string> }) => ({
    result: entryView(await read(await entryScope(context, params.repository!), params.id!), context.services.config.BASE_PATH),
  });
