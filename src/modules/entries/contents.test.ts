import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, sql, storedFiles, uploadContent } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

const restDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const md5 = (bytes: Uint8Array | string) => createHash('md5').update(bytes).digest('hex');
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('0000000d49484452', 'hex'), Buffer.alloc(40, 7)]);

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

describe('POST C/content (multipart upload)', () => {
  it('creates version 1.0 with every field of the spec, in a folder, with tags, type and properties', async () => {
    const folder = await newFolder(service, 'uploads');
    const bytes = 'Hello, content repository!\n';
    const { status, body } = await uploadContent(service, {
      name: 'greeting.txt',
      parentId: folder.id,
      mimeType: 'text/plain',
      typeName: 'memo',
      tags: ['red', 'blue', 'red'],
      properties: { author: 'Ada', pages: 3 },
      bytes,
      fileName: 'hello-original.txt',
    });
    expect(status).toBe(201);
    expect(body).toEqual({
      _type: 'svc.model.content.Content',
      id: expect.stringMatching(uuid),
      chronicalId: body.id,
      active: true,
      entryType: 'CONTENT',
      name: 'greeting.txt',
      owner: 'admin',
      createdAt: expect.stringMatching(restDate),
      createdBy: 'admin',
      lastModifiedAt: body.createdAt,
      lastModifiedBy: 'admin',
      version: '1.0',
      versionStatus: 'CURRENT',
      typeName: 'memo',
      tags: ['red', 'blue'],
      properties: { author: 'Ada', pages: 3 },
      partition: 'access.svc.content.default',
      parent: {
        _type: 'svc.model.content.Folder',
        id: folder.id,
        chronicalId: folder.id,
        active: true,
        entryType: 'FOLDER',
        name: 'uploads',
        owner: 'admin',
        createdAt: folder.createdAt,
        createdBy: 'admin',
        lastModifiedAt: folder.lastModifiedAt,
        lastModifiedBy: 'admin',
        tags: [],
        properties: {},
        partition: 'access.svc.content.default',
      },
      resource: {
        _type: 'com.svc.model.resource.Resource',
        id: expect.stringMatching(uuid),
        name: 'hello-original.txt',
        mimeType: 'text/plain',
        fileSize: Buffer.byteLength(bytes),
        md5: md5(bytes),
        created: expect.stringMatching(restDate),
        creator: 'admin',
        partition: 'access.svc.content.default',
        downloadUrl: `/api/v1/access.svc.content.default/v1/content/${body.id}/download`,
        resourceSource: {
          _type: 'com.svc.model.resource.FileSystemResourceSource',
          id: body.resource.id,
          partition: 'access.svc.content.default',
          path: expect.stringMatching(/^[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f-]{36}$/),
        },
      },
    });
    // no lock, no predecessor: absent, not null
    expect(body).not.toHaveProperty('lockedBy');
    expect(body).not.toHaveProperty('predecessor');
    // the path names the stored bytes
    expect(await storedFiles(service)).toContain(body.resource.resourceSource.path);

    const got = await call(contentUrl(service, `/content/${body.id}`));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(body);
  });

  it('defaults the name to the file name and sniffs the type from the bytes (a PNG named .txt is image/png)', async () => {
    const body = await newContent(service, { bytes: png, fileName: 'picture.txt' });
    expect(body.name).toBe('picture.txt');
    expect(body.resource.mimeType).toBe('image/png');
    expect(body.resource.fileSize).toBe(png.length);
    expect(body.resource.md5).toBe(md5(png));
    expect(body).not.toHaveProperty('parent');
    expect(body.tags).toEqual([]);
    expect(body.properties).toEqual({});
    expect(body).not.toHaveProperty('typeName');
  });

  it('stores an empty file (as CMIS repositories do): 0 bytes down, its md5 as ETag, every range unsatisfiable', async () => {
    const empty = await uploadContent(service, { name: 'empty.txt', bytes: '' });
    expect(empty.status).toBe(201);
    expect(empty.body.resource).toMatchObject({ fileSize: 0, md5: 'd41d8cd98f00b204e9800998ecf8427e', mimeType: 'text/plain' });
    const download = await fetch(contentUrl(service, `/content/${empty.body.id}/download`));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-length')).toBe('0');
    expect(download.headers.get('etag')).toBe('"d41d8cd98f00b204e9800998ecf8427e"');
    expect((await download.arrayBuffer()).byteLength).toBe(0);
    const range = await fetch(contentUrl(service, `/content/${empty.body.id}/download`), { headers: { range: 'bytes=0-0' } });
    expect(range.status).toBe(416);
    expect(range.headers.get('content-range')).toBe('bytes */0');
    await range.arrayBuffer();
  });

  it('rejects a missing file part, bad fields and an unknown folder, leaving no bytes behind', async () => {
    const before = await storedFiles(service);

    const missing = await uploadContent(service, { name: 'nothing.txt', file: false });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("'file'");

    const badProperties = await uploadContent(service, { name: 'props.txt', properties: '{not json' });
    expect(badProperties.status).toBe(400);
    expect(badProperties.body.message).toContain('properties');

    const arrayProperties = await uploadContent(service, { name: 'props.txt', properties: '[1,2]' });
    expect(arrayProperties.status).toBe(400);

    const badName = await uploadContent(service, { name: 'a/b.txt' });
    expect(badName.status).toBe(400);
    expect(badName.body.message).toContain("'/'");

    const noFolder = await uploadContent(service, { name: 'lost.txt', parentId: 'no-such-folder' });
    expect(noFolder.status).toBe(404);
    expect(noFolder.body.reasonCode).toBe('notFound');

    const emptyTag = await uploadContent(service, { name: 'tagged.txt', tags: [''] });
    expect(emptyTag.status).toBe(400);
    expect(emptyTag.body.message).toContain('tag');

    const twice = new FormData();
    twice.append('name', 'one.txt');
    twice.append('name', 'two.txt');
    twice.append('file', new Blob([Buffer.from('twice')]), 'twice.txt');
    const duplicated = await call(contentUrl(service, '/content'), { method: 'POST', body: twice });
    expect(duplicated.status).toBe(400);
    expect(duplicated.body.message).toContain('name must be given once');

    expect(await storedFiles(service)).toEqual(before);
    const pending = await sql<{ n: string }>(service, `select count(*) as n from resource where state = 'pending'`);
    expect(Number(pending[0]!.n)).toBe(0);
  });

  it('answers 409 when the name is taken in the folder, and 404 for an unknown repository', async () => {
    await newContent(service, { name: 'twice.txt' });
    const again = await uploadContent(service, { name: 'twice.txt' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 409, reasonCode: 'conflict' });
    expect(again.body.message).toContain('twice.txt');

    const elsewhere = await uploadContent(service, { name: 'x.txt', base: `${service.baseUrl}/api/v1/access.svc.content.nowhere/v1` });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.message).toContain("repository 'nowhere'");
  });

  it('needs a session (401)', async () => {
    const response = await call(`${service.contentBase}/content`, { method: 'POST', body: new FormData() });
    expect(response.status).toBe(401);
  });
});

describe('GET C/content/{id}/download', () => {
  const text = 'The quick brown fox jumps over the lazy dog';
  let content: Record<string, any>;
  beforeAll(async () => {
    content = await newContent(service, { name: 'fox “story”.txt', bytes: text, mimeType: 'text/plain; charset=utf-8', fileName: 'uploaded as.txt' });
  });

  it('answers the bytes with Content-Type, Content-Length, Content-Disposition and ETag = md5', async () => {
    const response = await fetch(contentUrl(service, `/content/${content.id}/download`));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(text);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String(text.length));
    expect(response.headers.get('etag')).toBe(`"${md5(text)}"`);
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    const disposition = response.headers.get('content-disposition')!;
    expect(disposition).toMatch(/^attachment; filename="fox [^"]*story[^"]*\.txt"; filename\*=UTF-8''fox%20%E2%80%9Cstory%E2%80%9D\.txt$/);
  });

  it("names the download after the content's name, not the file it was uploaded as: a rename renames it", async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('renamed bytes')]), 'upload-name.txt');
    form.append('name', 'shown-name.txt');
    const created = await call(contentUrl(service, '/content'), { method: 'POST', body: form });
    expect(created.status).toBe(201);
    const disposition = async () => (await fetch(contentUrl(service, `/content/${created.body.id}/download`), { method: 'HEAD' })).headers.get('content-disposition');
    expect(await disposition()).toBe('attachment; filename=shown-name.txt');
    expect((await call(contentUrl(service, `/content/${created.body.id}`), json('PATCH', { name: 'renamed.txt' }))).status).toBe(200);
    expect(await disposition()).toBe('attachment; filename=renamed.txt');
  });

  it('serves a Range as 206 with Content-Range, and an unsatisfiable one as 416', async () => {
    const partial = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers: { range: 'bytes=4-8' } });
    expect(partial.status).toBe(206);
    expect(await partial.text()).toBe('quick');
    expect(partial.headers.get('content-range')).toBe(`bytes 4-8/${text.length}`);
    expect(partial.headers.get('content-length')).toBe('5');

    const suffix = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers: { range: 'bytes=-3' } });
    expect(suffix.status).toBe(206);
    expect(await suffix.text()).toBe('dog');

    const outside = await call(contentUrl(service, `/content/${content.id}/download`), { headers: { range: `bytes=${text.length}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${text.length}`);
    expect(outside.body).toMatchObject({ status: 416, reasonCode: 'rangeNotSatisfiable' });
  });

  it('answers 304 to If-None-Match with the ETag, and the bytes to another ETag', async () => {
    const etag = `"${md5(text)}"`;
    const cached = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe('');
    expect(cached.headers.get('etag')).toBe(etag);
    const stale = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers: { 'if-none-match': '"0123"' } });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(text);
    // as RFC 9110 compares: one of a list, a weak tag, any (`*`)
    for (const ifNoneMatch of [`"0123", ${etag}`, `W/${etag}`, '*']) {
      const answer = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers: { 'if-none-match': ifNoneMatch } });
      expect(answer.status, ifNoneMatch).toBe(304);
      await answer.arrayBuffer();
    }
    // and by date when no tag is given
    const since = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers: { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() } });
    expect(since.status).toBe(304);
    await since.arrayBuffer();
  });

  it('answers 412 when If-Match names another version or If-Unmodified-Since is older, the bytes otherwise', async () => {
    const etag = `"${md5(text)}"`;
    const download = (headers: Record<string, string>) => call(contentUrl(service, `/content/${content.id}/download`), { headers });
    const failing: Record<string, string>[] = [{ 'if-match': '"0123"' }, { 'if-match': `W/${etag}` }, { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' }];
    for (const headers of failing) {
      expect(await download(headers), JSON.stringify(headers)).toMatchObject({ status: 412, body: { reasonCode: 'preconditionFailed', message: expect.stringContaining(etag) } });
    }
    const holding: Record<string, string>[] = [{ 'if-match': etag }, { 'if-match': '*' }, { 'if-unmodified-since': new Date(Date.now() + 60_000).toUTCString() }];
    for (const headers of holding) {
      const answer = await fetch(contentUrl(service, `/content/${content.id}/download`), { headers });
      expect(answer.status, JSON.stringify(headers)).toBe(200);
      expect(await answer.text()).toBe(text);
    }
  });

  it('answers 404 for an unknown content, for a folder id and in an unknown repository', async () => {
    const unknown = await call(contentUrl(service, '/content/no-such-id/download'));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ reasonCode: 'notFound' });
    const folder = await newFolder(service, 'not-downloadable');
    expect((await call(contentUrl(service, `/content/${folder.id}/download`))).status).toBe(404);
    const repository = await call(contentUrl(service, `/content/${content.id}/download`, {}, service.adminSession, `${service.baseUrl}/api/v1/access.svc.content.nowhere/v1`));
    expect(repository.status).toBe(404);
  });

  it('the GraphQL downloadUrl names the same bytes', async () => {
    const result = await service.graphql<{ content: { resource: { downloadUrl: string; md5: string } } }>(
      'query($id: ID!) { content(repository: "default", id: $id) { resource { downloadUrl md5 } } }',
      { id: content.id },
    );
    const url = `${service.baseUrl}${result.data!.content.resource.downloadUrl}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${service.adminSession}` } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(text);
    expect(result.data!.content.resource.md5).toBe(md5(text));
  });
});

describe('uploads over MAX_UPLOAD_BYTES', () => {
  let small: TestService;
  beforeAll(async () => {
    small = await startTestService({ MAX_UPLOAD_BYTES: '1000' });
  });
  afterAll(() => small?.stop());

  it('answers 413 and leaves neither bytes nor a resource row behind', async () => {
    const atLimit = await uploadContent(small, { name: 'fits.bin', bytes: Buffer.alloc(1000, 1) });
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.resource.fileSize).toBe(1000);
    const kept = await storedFiles(small);
    expect(kept).toEqual([atLimit.body.resource.resourceSource.path]);

    const over = await uploadContent(small, { name: 'too-big.bin', bytes: Buffer.alloc(5000, 2) });
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status: 413, reasonCode: 'tooLarge' });
    expect(over.body.message).toContain('1000');

    // a Content-Length far over the limit is refused before reading
    const declared = await uploadContent(small, { name: 'huge.bin', bytes: Buffer.alloc(100_000, 3) });
    expect(declared.status).toBe(413);

    expect(await storedFiles(small)).toEqual(kept);
    const rows = await sql<{ id: string }>(small, 'select id from resource order by id');
    expect(rows.map((row) => row.id)).toEqual([atLimit.body.resource.id]);
    const search = await call(contentUrl(small, '/content/search', { name: 'too-big.bin' }));
    expect(search.body.count).toBe(0);
  });

  it('refuses a body declared too large at once, before any part arrives, and never invites it with 100 Continue', async () => {
    const http = await import('node:http');
    // a multipart body far over the limit; a raw one a byte over it (a raw body has no envelope to allow for)
    const bodies = [
      { path: '/content', query: {}, type: 'multipart/form-data; boundary=XX', length: 100_000_000_000 },
      { path: '/uploads', query: { fileName: 'raw.bin' }, type: 'application/octet-stream', length: 1001 },
    ];
    for (const [body, expectContinue] of bodies.flatMap((b) => [[b, false], [b, true]] as const)) {
      const request = http.request(new URL(contentUrl(small, body.path, body.query)), {
        method: 'POST',
        headers: {
          'content-type': body.type,
          'content-length': String(body.length),
          ...(expectContinue && { expect: '100-continue' }),
        },
      });
      request.on('error', () => undefined);
      let invited = false;
      request.on('continue', () => (invited = true));
      const answer = new Promise<{ status: number; body: string }>((resolve) =>
        request.on('response', (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        }),
      );
      if (!expectContinue) request.write('--XX\r\n');
      else request.flushHeaders();
      const { status, body: answered } = await answer;
      request.destroy();
      expect({ path: body.path, expectContinue, status, invited, reasonCode: JSON.parse(answered).reasonCode }).toEqual({
        path: body.path,
        expectContinue,
        status: 413,
        invited: false,
        reasonCode: 'tooLarge',
      });
    }
  });
});
