import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateContentDocument } from '../../rest-compat/operations/documents.generated.js';
import { contentDomain, route } from '../../rest-compat/route.js';
import { createdEntryReply } from '../../rest-compat/routes/results.js';
import { contentSchema } from '../../rest-compat/shapes/schemas.js';
import { newFolder, sql, storedFiles, succeeded, uploadContent, type UploadOptions } from '../helpers/entries.js';
import { referencePrefix, startBesideReference } from '../helpers/reference.js';
import type { TestService } from '../helpers/service.js';

/*
 * REST's create (POST C/content) calls the create verb with the bytes it received: the resource row is
 * inserted ready by the create's statement, no pending upload is staged and claimed (docs/api.md,
 * "Uploads: the create verb called directly"). Here each create is held to the path it replaced,
 * served beside it under `/reference/api/v1` (the row as it was: the bytes staged as a pending upload,
 * create-content.graphql claiming it through the gateway): the same status and JSON (ids and dates
 * aside), the same rows (entry, resource, event, the extraction queued), no bytes or pending rows left
 * behind by a create that failed, over a matrix of inputs and callers.
 */

/** The row as it was before the direct create. */
const documentRows = [
  route({
    method: 'POST',
    path: `${contentDomain}/content`,
    summary: 'Create a content',
    request: (inputs) => ({ body: { kind: 'upload', schema: inputs.text('CreateContentInput').omit({ uploadId: true }), file: 'required' } as const }),
    responses: { 201: contentSchema },
    document: CreateContentDocument,
    variables: ({ params, body }) => ({ repository: params.repository!, input: { ...body.fields, uploadId: body.upload.uploadId! } }),
    reply: createdEntryReply,
  }),
];

let service: TestService;
let sessions: Record<string, string>;
let ids: Record<string, string>;

const referenceBase = () => `${service.baseUrl}${referencePrefix}/access.svc.content.default/v1`;

/** A create's answer as text, its own ids, storage path and dates replaced by names (they differ between any two creates). */
function comparable(body: Record<string, any>): string {
  let text = JSON.stringify(body);
  // the storage path's folders are a hash of the resource id
  if (body.resource?.resourceSource?.path) text = text.replaceAll(body.resource.resourceSource.path, '<path>');
  if (body.resource?.id) text = text.replaceAll(body.resource.id, '<resource>');
  if (body.id) text = text.replaceAll(body.id, '<id>');
  return text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000/g, '<date>');
}

/** What a created content left in the database (its entry with the resource fields copied onto it, its resource, its events, its extraction), ids and times aside. */
async function rowsOf(contentId: string) {
  const [entry] = await sql<Record<string, unknown>>(service, `select * from entry where id = ?`, [contentId]);
  const [resource] = await sql<Record<string, unknown>>(service, `select * from resource where id = ?`, [entry!.resource_id]);
  const events = await sql(service, `select type, actor, repository, details from event where entry_id = ? order by id`, [contentId]);
  const [{ extraction }] = await sql<{ extraction: boolean }>(
    service,
    `select exists(select 1 from text_extraction_queue where resource_id = ?) or exists(select 1 from resource_text where resource_id = ?) or exists(select 1 from resource_text_failure where resource_id = ?) as extraction`,
    Array(3).fill(entry!.resource_id),
  );
  const varying = ['id', 'chronical_id', 'resource_id', 'storage_path', 'created_at', 'last_modified_at', 'resource_created_at'];
  const without = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).filter(([column]) => !varying.includes(column)));
  return { entry: without(entry!), resource: without(resource!), events, extraction };
}

/** What a failed create must not leave: pending uploads, files in the content store. */
const leftovers = async () => ({
  pending: (await sql<{ n: number }>(service, `select count(*)::int as n from resource where state = 'pending'`))[0]!.n,
  files: (await storedFiles(service)).filter((file) => !file.startsWith('.tmp')).length,
});

/** The same create on both paths in turn, with their rows: the first one made is deactivated so that the second's name is free. */
async function bothPaths(options: UploadOptions) {
  const before = await leftovers();
  const direct = await uploadContent(service, options);
  const directRows = direct.status === 201 ? await rowsOf(direct.body.id) : undefined;
  if (direct.status === 201) await succeeded(service, 'DELETE', `/content/${direct.body.id}`);
  else expect(await leftovers(), 'a create that failed leaves neither pending rows nor bytes').toEqual(before);
  const reference = await uploadContent(service, { ...options, base: referenceBase() });
  return { direct, directRows, reference };
}

beforeAll(async () => {
  ({ service, sessions, ids } = await startBesideReference(documentRows));
  ids.writable = (await newFolder(service, 'writable')).id;
  await succeeded(service, 'PUT', `/folder/${ids.writable}/acl`, { entries: [{ principal: 'reader', permission: 'write' }] });
  ids.taken = (await newFolder(service, 'taken')).id;
  await uploadContent(service, { name: 'taken.txt', parentId: ids.taken });
  ids.deactivated = (await newFolder(service, 'deactivated')).id;
  await succeeded(service, 'DELETE', `/folder/${ids.deactivated}`);
});
afterAll(async () => {
  await service?.stop();
});

describe('POST C/content: the create verb called directly answers as the document did', () => {
  const creates: [string, () => UploadOptions][] = [
    ['at the root, named after the file', () => ({ fileName: 'root file.txt', bytes: 'root bytes' })],
    ['in a folder, with every field', () => ({ name: 'full.txt', parentId: ids.team, mimeType: 'text/markdown', typeName: 'doc', tags: ['x', 'y', 'x'], properties: { a: 1, b: { c: 'd' } }, bytes: '# title' })],
    ['binary bytes, the type sniffed', () => ({ name: 'image.png', parentId: ids.inner, bytes: Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') })],
    ['empty bytes', () => ({ name: 'empty.bin', parentId: ids.inner, bytes: '' })],
    ['4 KiB of random bytes', () => ({ name: 'random.bin', parentId: ids.inner, bytes: Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)) })],
    ['a user with write on the folder', () => ({ name: 'by reader.txt', parentId: ids.writable, session: sessions.reader })],
    ['a name taken', () => ({ name: 'taken.txt', parentId: ids.taken })],
    ['a name only a file name gives, invalid', () => ({ fileName: '..' })],
    ['a tag too long', () => ({ name: 'tag.txt', tags: ['t'.repeat(200)] })],
    ['properties not an object', () => ({ name: 'props.txt', properties: '[1]' })],
    ['properties with a bad key', () => ({ name: 'props.txt', properties: { 'bad key': 1 } })],
    ['a media type that is none', () => ({ name: 'type.txt', mimeType: 'not a type' })],
    ['an unknown folder', () => ({ name: 'lost.txt', parentId: 'no-such-folder' })],
    ['a folder the user may not read', () => ({ name: 'secret.txt', parentId: ids.secret, session: sessions.reader })],
    ['a folder the user may only read', () => ({ name: 'read only.txt', parentId: ids.team, session: sessions.reader })],
    ['the root, for a user without write there', () => ({ name: 'root.txt', session: sessions.outsider })],
    ['a deactivated folder', () => ({ name: 'gone.txt', parentId: ids.deactivated })],
    ['no file part', () => ({ name: 'nothing.txt', file: false })],
    ['an unknown session', () => ({ name: 'who.txt', session: 'not-a-session' })],
  ];
  it.each(creates)('%s', async (_case, options) => {
    const { direct, directRows, reference } = await bothPaths(options());
    expect(direct.status).toBe(reference.status);
    expect(direct.status, JSON.stringify(direct.body)).not.toBe(500);
    expect(comparable(direct.body)).toBe(comparable(reference.body));
    if (direct.status === 201) {
      expect(directRows).toEqual(await rowsOf(reference.body.id));
      const download = await fetch(`${service.contentBase}/content/${direct.body.id}/download?sessionId=${service.adminSession}&includeInactive=true`);
      const { bytes, name } = options();
      expect(Buffer.from(await download.arrayBuffer()).toString('hex')).toBe(Buffer.from(bytes ?? `bytes of ${name ?? 'a file'}`).toString('hex'));
    }
  });
});

describe('POST C/content: a create whose statement fails', () => {
  it('removes the bytes it placed, and the name stays taken by the first', async () => {
    const before = await leftovers();
    const { status, body } = await uploadContent(service, { name: 'taken.txt', parentId: ids.taken, bytes: 'the second, refused' });
    expect(status).toBe(409);
    expect(body).toMatchObject({ reasonCode: expect.any(String) });
    expect(await leftovers()).toEqual(before);
  });

  it('answers 400, not 500, for a field the verb refuses after the bytes arrived', async () => {
    const before = await leftovers();
    const { status } = await uploadContent(service, { name: 'x'.repeat(300), bytes: 'too long a name' });
    expect(status).toBe(400);
    expect(await leftovers()).toEqual(before);
  });
});
