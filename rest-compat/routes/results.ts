import { projection, type SearchParameters } from '../params.js';
import type { Reply } from '../route.js';
import { entriesResponse, entryShape } from '../shapes/entries.js';

/** A Folder or Content in the spec's shape (201 when the call created it). */
export const entryReply = (result: unknown): Reply => ({ body: entryShape(result as Record<string, unknown>) });
export const createdEntryReply = (result: unknown): Reply => ({ status: 201, ...entryReply(result) });

/** An EntriesResponse, projected as the search parameters ask. */
export const pageReply = (result: unknown, { query }: { query: SearchParameters }): Reply => ({
  body: entriesResponse(result as { count: number; duration: number; entries: Record<string, unknown>[] }, projection(query)),
});
