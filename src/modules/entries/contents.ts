import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { executePrepared } from '../../db/prepared.js';
import { illegalArguments, notFound } from '../../errors.js';
import { authorize, type AuthorizeOptions } from '../access/policy.js';
import { checkTypeAllowed, type FolderPolicies } from '../access/folder-policies.js';
import { entryWriteFailure, nameClash } from './chronicles.js';
import { Entry, Resource } from './entry.entity.js';
import { optionalMediaType } from './media-types.js';
import { asStoredTag, isWellFormed, longerThan, textProblem, validateEntryName, validateTypeName } from './names.js';
import { requireParentFolderWithPolicies } from './queries.js';
import { readEntry, type EntryRead } from './read.js';
import { plainSelect, type PlainRecord } from '../../db/plain-rows.js';
import type { CreateFolderInput } from './folders.js';
import type { EntryScope } from './scope.js';
import { claimExpressions, claimParameters, pendingUploadName, receivedExpressions, receivedParameters, uploadNotFound, type ReceivedBytes } from './uploads.js';
import { requestTextExtraction } from '../fulltext/operations.js';
import { requestThumbnail } from '../conversion/thumbnails.js';

// zod's max counts UTF-16 units
const tagSchema = z
  .string()
  .min(1, 'a tag must not be empty')
  .refine((tag) => !longerThan(tag, 128), 'a tag is at most 128 characters');
const propertyName = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

export const maxTagsPerEntry = 256;

/** Tags as stored: NFC-normalised (so that look-alikes are one tag), each once, at most 256; a bad one is a 400. */
export function validateTags(tags: string[] | null | undefined): string[] {
  const list = (tags ?? []).map((tag) => {
    const problem = textProblem(tag);
    if (problem) throw illegalArguments(`tags: a tag ${problem}`);
    const normalised = asStoredTag(tag);
    const result = tagSchema.safeParse(normalised);
    if (!result.success) throw illegalArguments(`tags: ${result.error.issues[0]!.message}`);
    return normalised;
  });
  const unique = [...new Set(list)];
  if (unique.length > maxTagsPerEntry) throw illegalArguments(`tags: an entry has at most ${maxTagsPerEntry} tags`);
  return unique;
}

const maxPropertyDepth = 16;

/**
 * What is wrong with a properties value, if anything, found without recursion (a hostile value may be
 * very deep): nesting deeper than the maximum, a number JSON cannot hold (`1e309` parses to Infinity,
 * which would be stored as null), an integer beyond ±(2^53 − 1) (parsed, it is already another number:
 * 9007199254740993 arrives as …992, and would be stored altered), a lone surrogate in a key or a
 * string (Postgres refuses it).
 */
function propertiesProblem(value: unknown): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (depth > maxPropertyDepth) return `nested deeper than ${maxPropertyDepth} levels`;
    if (typeof current === 'number' && !Number.isFinite(current)) return `${current} is not a finite number`;
    if (typeof current === 'number' && Number.isInteger(current) && !Number.isSafeInteger(current)) {
      return `${current} is an integer beyond ±${Number.MAX_SAFE_INTEGER}, which a JSON number does not carry exactly: send it as a string`;
    }
    if (typeof current === 'string' && !isWellFormed(current)) return 'a string is not valid Unicode (it holds a lone surrogate)';
    if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        if (!isWellFormed(key)) return 'a key is not valid Unicode (it holds a lone surrogate)';
        stack.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

/** Properties as stored are at most this large, as JSON. */
const maxPropertiesJsonLength = 64 * 1024;

/**
 * Properties merged from parts that were each valid (stored ones and a patch, a folder's and an
 * entry's own): only their size can be wrong. What was stored before a rule came in blocks nothing.
 */
export function boundedProperties(properties: Record<string, unknown>): Record<string, unknown> {
  if (JSON.stringify(properties).length > maxPropertiesJsonLength) throw illegalArguments('properties: larger than 64 KiB');
  return properties;
}

/** The properties a caller gives (an upload's, a folder's, a patch), checked once. */
export function validateProperties(properties: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const value = properties ?? {};
  for (const key of Object.keys(value)) {
    if (!propertyName.test(key)) throw illegalArguments(`properties: '${key}' is not a valid property name`);
  }
  const problem = propertiesProblem(value);
  if (problem) throw illegalArguments(`properties: ${problem}`);
  return boundedProperties(value);
}

/**
 * The tags and properties of an entry created in `folder` (upload, folder creation, copy, a
 * conversion's new content): its own, plus what the inheritance policy in effect there hands down —
 * the folder's tags with `inheritTags`, the folder's properties that the entry does not set itself
 * with `inheritCommonProperties`. Without an inheritance policy nothing is handed down: the flags
 * default to true on a policy, and no policy asks for nothing (docs/administration.md). Copied at
 * creation: a later change of the folder's tags or properties does not reach entries made before.
 */
export function withInherited(
  folder: Pick<Entry, 'name' | 'tags' | 'properties'> | null,
  policies: FolderPolicies,
  own: { tags: string[]; properties: Record<string, unknown> },
): { tags: string[]; properties: Record<string, unknown> } {
  const inheritance = folder ? policies.inheritance : null;
  if (!folder || !inheritance) return own;
  const tags = inheritance.inheritTags ? [...new Set([...own.tags, ...(folder.tags ?? [])])] : own.tags;
  if (tags.length > maxTagsPerEntry) throw illegalArguments(`tags: with the tags inherited from folder '${folder.name}', more than ${maxTagsPerEntry}`);
  const properties = inheritance.inheritCommonProperties ? boundedProperties({ ...(folder.properties ?? {}), ...own.properties }) : own.properties;
  return { tags, properties };
}

/** Version 1.0 of a new chronicle (CURRENT, owned by the caller) in the unit of work of `em`. */
export function firstVersion(
  scope: EntryScope,
  em: EntityManager,
  fields: Pick<Entry, 'name' | 'parentId' | 'resourceId' | 'typeName' | 'properties' | 'tags'>,
): Entry {
  const id = randomUUID();
  const now = new Date();
  const user = scope.principal.userName;
  return em.create(Entry, {
    ...fields,
    id,
    repositoryId: scope.repository.id,
    entryType: 'CONTENT',
    chronicalId: id,
    active: true,
    owner: user,
    createdAt: now,
    createdBy: user,
    lastModifiedAt: now,
    lastModifiedBy: user,
    version: '1.0',
    versionMajor: 1,
    versionMinor: 0,
    versionStatus: 'CURRENT',
    isLatest: true,
  });
}

/**
 * A new content over an upload: `name` defaults to the upload's file name, `mimeType` to the sniffed
 * one, `typeName` to the folder's default type policy; the rest as for a folder.
 */
export interface CreateContentInput extends Omit<CreateFolderInput, 'name'> {
  uploadId: string;
  name?: string | null;
  mimeType?: string | null;
  typeName?: string | null;
}

/**
 * The input of `createContent`: its bytes either a pending upload of the caller (`uploadId`, GraphQL)
 * or bytes the same request received (`received`, REST's create: no pending row to claim).
 */
export type NewContentInput = Omit<CreateContentInput, 'uploadId'> & ({ uploadId: string } | { received: ReceivedBytes });

/** A content as its creation answers it: the version with its folder and resource as read (no predecessor), as the read verb's. */
export type CreatedContent = EntryRead;

/**
 * A new content (version 1.0, CURRENT, its own chronicle) over an upload. Received bytes are written,
 * fsynced and placed before the statement that records them, and removed when it fails; a crash in
 * between leaves a file no row names, which `sweepUnreferencedFiles` removes.
 */
export async function createContent(scope: EntryScope, input: NewContentInput): Promise<CreatedContent> {
  const { parent, policies } = await requireParentFolderWithPolicies(scope, input.parentId);
  const typeName = validateTypeName(input.typeName) || policies.defaultTypeName;
  if (parent) await checkTypeAllowed(scope.em, policies, typeName, parent.name);
  const { tags, properties } = withInherited(parent, policies, { tags: validateTags(input.tags), properties: validateProperties(input.properties) });
  const mimeType = optionalMediaType(input.mimeType);
  // the version's bytes: received by this request (placed here, their row inserted ready by the statement) or the caller's pending upload (claimed by it)
  const bytes =
    'received' in input
      ? { id: input.received.id, received: input.received, statement: 'create-content-received', expressions: receivedExpressions, parameters: receivedParameters(scope, input.received, mimeType) }
      : { id: input.uploadId, received: undefined, statement: 'create-content', expressions: claimExpressions, parameters: claimParameters(scope, input.uploadId, mimeType) };
  const { received } = bytes;
  // without a name the content is named after the upload's file, which must then be a valid name
  const name = validateEntryName(input.name ?? (received ? received.name : await pendingUploadName(scope, bytes.id)));
  if (received) await received.file.commit(received.storagePath);
  // the answer as plain records (read-only, as the read verb's): mapping entities was ≈ 6 % of an upload's node CPU (docs/benchmarks.md)
  const createdColumns = {
    entry: plainSelect(scope.em, Entry, 'created'),
    resource: plainSelect(scope.em, Resource, 'claimed', 'resource.'),
  };
  let row: Record<string, unknown> | undefined;
  try {
    // one statement: the resource taken over or inserted (and queued for its text), version 1.0
    // inserted and its event recorded (the outbox, events/record.ts) together, or none of it (an
    // upload stays pending) — a single round trip where a transaction would take four
    [row] = await executePrepared<Record<string, unknown>>(
      scope.em,
      bytes.statement,
      `with ${bytes.expressions},
       created as (
         insert into entry (id, repository_id, entry_type, chronical_id, name, active, owner, created_at, created_by,
             last_modified_at, last_modified_by, version, version_major, version_minor, version_status, is_latest,
             parent_id, resource_id, type_name, properties, tags)
         select e.id, ?, 'CONTENT', e.id, ?, true, ?, now(), ?, now(), ?, '1.0', 1, 0, 'CURRENT', true,
             ?, claimed.id, ?, ?::jsonb, array(select jsonb_array_elements_text(?::jsonb))
           from claimed, (select ?::text as id) e
         returning *),
       recorded as (
         insert into event (repository_id, repository, type, entry_id, chronical_id, actor, details)
         select repository_id, ?, 'ENTRY_CREATED', id, chronical_id, created_by, jsonb_build_object('entryType', 'CONTENT', 'name', name, 'parentId', parent_id)
           from created)
       select ${createdColumns.entry.sql}, ${createdColumns.resource.sql} from created, claimed`,
      [
        ...bytes.parameters,
        scope.repository.id,
        name,
        ...Array<string>(3).fill(scope.principal.userName),
        parent?.id ?? null,
        typeName,
        JSON.stringify(properties),
        JSON.stringify(tags),
        randomUUID(),
        scope.repository.name,
      ],
    );
  } catch (error) {
    if (received) await scope.services.contentStore.remove(received.storagePath);
    throw entryWriteFailure(error, () => nameClash(name)) ?? error;
  }
  // no row: no such pending upload (received bytes always make theirs)
  if (!row) throw uploadNotFound(bytes.id);
  const resource = createdColumns.resource.take(row)!;
  requestTextExtraction(scope);
  const content = createdColumns.entry.take(row)!;
  requestThumbnail(scope, content, resource);
  // the folder is one the caller may read (requireParentFolderWithPolicies): the answer shows it
  return Object.assign(content, { preloaded: { parent, resource, predecessor: null } });
}

/** A content version the caller may read, with its resource, parent and predecessor (the read verb, read.ts). */
export async function getContent(scope: EntryScope, id: string): Promise<EntryRead> {
  return readEntry(scope, id, 'CONTENT');
}

/**
 * The content version `id` and its resource, for a download: a deactivated content is a 404 unless
 * the request asks for deactivated entries (`includeInactive`) and the caller is its owner or an
 * administrator.
 */
export async function contentForDownload(scope: EntryScope, id: string, options: AuthorizeOptions = {}): Promise<{ content: EntryRead; resource: PlainRecord<Resource> }> {
  const content = await getContent(scope, id);
  await authorize(scope, 'download', { entry: content }, options);
  const { resource } = content.preloaded;
  if (!resource) throw notFound(`content '${content.id}' has no resource`);
  return { content, resource };
}
