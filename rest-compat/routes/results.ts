import type { EntriesPageFieldsFragment, EntryFieldsFragment } from '../operations/documents.generated.js';
import type { Reply } from '../route.js';
import { entriesResponse, entryShape, type Projection } from '../shapes/entries.js';

/** A Folder or Content in the spec's shape (201 when the call created it). */
export const entryReply = ({ result }: { result: EntryFieldsFragment }): Reply => ({ body: entryShape(result) });
export const createdEntryReply = (data: { result: EntryFieldsFragment }): Reply => ({ status: 201, ...entryReply(data) });
export const noContentReply = (): Reply => ({ status: 204 });

/** An EntriesResponse, projected as the search parameters ask. */
export const pageReply = ({ result }: { result: EntriesPageFieldsFragment }, { projection }: { projection: Projection }): Reply => ({
  body: entriesResponse(result, projection),
});
