import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';
import { sweepPendingUploads } from './uploads.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const createContent = `mutation($input: CreateContentInput!) {
  createContent(repository: "default", input: $input) { id name version resource { name mimeType fileSize md5 downloadUrl } }
}`;

async function stage(bytes: string, fileName: string, session = service.adminSession) {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(bytes)]), fileName);
  return call(`${service.contentBase}/uploads?sessionId=${session}`, { method: 'POST', body: form });
}

describe('the GraphQL client upload path: POST C/uploads, then createContent', () => {
  it('stages bytes, turns them into a content, and serves them at downloadUrl', async () => {
    const staged = await stage('%PDF-1.7 not really a pdf', 'report.pdf');
    expect(staged.status).toBe(201);
    expect(staged.body).toMatchObject({ name: 'report.pdf', mimeType: 'application/pdf', fileSize: 25, md5: expect.stringMatching(/^[0-9a-f]{32}$/) });

    const result = await service.graphql<{ createContent: { id: string; name: string; version: string; resource: { downloadUrl: string; md5: string } } }>(
      createContent,
      { input: { uploadId: staged.body.uploadId, name: 'Quarterly report.pdf', tags: ['q3'] } },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.createContent).toMatchObject({ name: 'Quarterly report.pdf', version: '1.0', resource: { name: 'report.pdf', md5: staged.body.md5 } });
    const download = await fetch(`${service.baseUrl.replace(/\/$/, '')}${result.data!.createContent.resource.downloadUrl}`, {
      headers: { authorization: `Bearer ${service.adminSession}` },
    });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('%PDF-1.7 not really a pdf');
  });

  it('accepts a raw body with the file name in the query', async () => {
    const raw = await call(`${service.contentBase}/uploads?sessionId=${service.adminSession}&fileName=notes.txt`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'plain notes',
    });
    expect(raw).toMatchObject({ status: 201, body: { name: 'notes.txt', mimeType: 'text/plain', fileSize: 11 } });
  });

  it('keeps the file name safe to show: no bidirectional override, at most 255 characters with the extension kept', async () => {
    const upload = (fileName: string) =>
      call(`${service.contentBase}/uploads?sessionId=${service.adminSession}&fileName=${encodeURIComponent(fileName)}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect((await upload('a\u202egpj.exe')).body.name).toBe('agpj.exe');
    const long = (await upload(`${'x'.repeat(10_000)}.txt`)).body.name as string;
    expect([long.length, long.endsWith('xx.txt')]).toEqual([255, true]);
    expect((await upload(' cafe\u0301.txt ')).body.name).toBe('caf\u00e9.txt');
    expect((await upload('\u202e')).body.name).toBe('upload');
  });

  it('sniffs the type of a raw body sent as a form (curl --data-binary\'s default type), as of one sent without a type', async () => {
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#fff' } }).png().toBuffer();
    const raw = await call(`${service.contentBase}/uploads?sessionId=${service.adminSession}&fileName=scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: png,
    });
    expect(raw).toMatchObject({ status: 201, body: { name: 'scan', mimeType: 'image/png', fileSize: png.length } });
  });

  it('uses an upload id once, and only for the user who uploaded it', async () => {
    const staged = await stage('once only', 'once.txt');
    const first = await service.graphql(createContent, { input: { uploadId: staged.body.uploadId, name: 'once-a.txt' } });
    expect(first.errors).toBeUndefined();
    const again = await service.graphql(createContent, { input: { uploadId: staged.body.uploadId, name: 'once-b.txt' } });
    expect(again.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });

    const bobSession = await service.createUserSession('bob');
    const bobs = await stage('bob bytes', 'bob.txt', bobSession);
    const stolen = await service.graphql(createContent, { input: { uploadId: bobs.body.uploadId, name: 'stolen.txt' } });
    expect(stolen.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
    const unknown = await service.graphql(createContent, { input: { uploadId: 'no-such-upload' } });
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound', status: 404 });
  });

  it('keeps an upload pending when its content cannot be created: a name clash, a bad file name, a mime type', async () => {
    const taken = await stage('first', 'taken.txt');
    expect((await service.graphql(createContent, { input: { uploadId: taken.body.uploadId } })).errors).toBeUndefined();
    const second = await stage('second', 'taken.txt');
    const clash = await service.graphql(createContent, { input: { uploadId: second.body.uploadId } });
    expect(clash.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'conflict', status: 409 });
    const renamed = await service.graphql<{ createContent: { name: string; resource: { md5: string; mimeType: string } } }>(createContent, {
      input: { uploadId: second.body.uploadId, name: 'not-taken.txt', mimeType: 'text/x-custom' },
    });
    expect(renamed.errors).toBeUndefined();
    expect(renamed.data!.createContent).toMatchObject({ name: 'not-taken.txt', resource: { md5: second.body.md5, mimeType: 'text/x-custom' } });

    // a file may be called what no entry may: its content needs another name
    const badName = await call(`${service.contentBase}/uploads?sessionId=${service.adminSession}&fileName=..`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'bytes' });
    expect(badName.body.name).toBe('..');
    const refused = await service.graphql(createContent, { input: { uploadId: badName.body.uploadId } });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ reasonCode: 'illegalArguments', status: 400 });
    const named = await service.graphql(createContent, { input: { uploadId: badName.body.uploadId, name: 'good name.txt' } });
    expect(named.errors).toBeUndefined();
  });

  it('stores quotes, question marks, backslashes and non-ASCII in names, tags and properties as given', async () => {
    const staged = await stage('odd', 'odd.txt');
    const properties = { quote: `it's "quoted" ? \\ $1 ü 🎉`, nested: { list: [1, '?', null, { deep: "'" }] } };
    const tags = ["it's", '?', '$1', 'ü'];
    const created = await service.graphql<{ createContent: { id: string; name: string } }>(createContent, {
      input: { uploadId: staged.body.uploadId, name: `what's ? $1 ü.txt`, tags, properties, typeName: "type'?" },
    });
    expect(created.errors).toBeUndefined();
    const read = await service.graphql<{ entry: { name: string; tags: string[]; properties: unknown; typeName: string } }>(
      `query($id: ID!) { entry(repository: "default", id: $id) { name tags properties typeName } }`,
      { id: created.data!.createContent.id },
    );
    expect(read.errors).toBeUndefined();
    expect(read.data!.entry).toEqual({ name: `what's ? $1 ü.txt`, tags, properties, typeName: "type'?" });
  });

  it('refuses uploads without a session, and stages empty ones', async () => {
    expect((await stage('x', 'x.txt', 'not-a-session')).status).toBe(401);
    const empty = await call(`${service.contentBase}/uploads?sessionId=${service.adminSession}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: '' });
    expect(empty).toMatchObject({ status: 201, body: { fileSize: 0, md5: 'd41d8cd98f00b204e9800998ecf8427e' } });
  });

  it('sweeps upload ids nobody used, with their bytes', async () => {
    const staged = await stage('abandoned', 'abandoned.txt');
    const em = service.services.orm.em.fork();
    const [row] = await em.getConnection().execute<{ storage_path: string }[]>('select storage_path from resource where id = ?', [staged.body.uploadId]);
    expect(await service.services.contentStore.exists(row!.storage_path)).toBe(true);
    // younger than the age limit: kept
    expect(await sweepPendingUploads(em, service.services, 3_600_000)).toBe(0);
    expect(await sweepPendingUploads(em, service.services, 0)).toBeGreaterThanOrEqual(1);
    expect(await service.services.contentStore.exists(row!.storage_path)).toBe(false);
    const use = await service.graphql(createContent, { input: { uploadId: staged.body.uploadId } });
    expect(use.errors?.[0]?.extensions).toMatchObject({ status: 404 });
  });
});
