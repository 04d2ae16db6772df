import type { EntriesPageFieldsFragment, EntryFieldsFragment } from '../operations/documents.generated.js';
import type { Reply } from '../route.js';
import { withRestDates } from '../shapes/dates.js';
import { entriesResponse, entryShape, type Projection } from '../shapes/entries.js';

/** A Folder or Content in the spec's shape (201 when the call created it). */
export const entryReply = ({ result }: { result: EntryFieldsFragment }): Reply => ({ body: entryShape(result) });
export const createdEntryReply = (data: { result: EntryFieldsFragment }): Reply => ({ status: 201, ...entryReply(data) });
export const noContentReply = (): Reply => ({ status: 204 });
/** A record of the administration domain (no REST shape of its own): the GraphQL result as the body, dates in the REST form. */
export const recordReply = ({ result }: { result: unknown }): Reply => ({ body: withRestDates(result) });
export const createdRecordReply = (data: { result: unknown }): Reply => ({ status: 201, ...recordReply(data) });

/** An EntriesResponse, projected as the search parameters ask. */
export const pageReply = ({ result }: { result: EntriesPageFieldsFragment }, { query }: { query: Projection }): Reply => ({
  body: entriesResponse(result, query),
});

/** The repository and id in the path of a call on one entry. */
export const byId = ({ params }: { params: Record<string, string> }) => ({ repository: params.repository!, id: params.id! });
