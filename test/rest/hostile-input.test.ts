import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, storedFiles, uploadContent } from '../helpers/entries.js';
import { call, json, startTestService, type TestService } from '../helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

/** The answer must carry the error body with this status: never a 500, never a hang. */
function expectErrorBody(answer: { status: number; body: any }, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', status });
}

describe('hostile input gets a 4xx with the error body', () => {
  it('a NUL character in an id, a filter, a tag or a name', async () => {
    expectErrorBody(await call(contentUrl(service, '/content/a%00b')), 400);
    expectErrorBody(await call(contentUrl(service, '/content/a%00b/download')), 400);
    expectErrorBody(await call(contentUrl(service, '/content/search', { name: 'x\u0000y' })), 400);
    const content = await newContent(service, { name: 'nul-target.txt' });
    expectErrorBody(await call(contentUrl(service, `/content/${content.id}/tags`, { tags: 'bad\u0000tag' }), { method: 'POST' }), 400);
    expectErrorBody(await call(contentUrl(service, '/folder'), json('POST', { name: 'a\u0000b' })), 400);
    expectErrorBody(await call(contentUrl(service, `/content/${content.id}`), json('PATCH', { properties: { note: 'a\u0000b' } })), 400);
  });

  it('a JSON body that is not UTF-8 is a 400; a media type in capitals is still JSON', async () => {
    const notUtf8 = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const refused = await call(contentUrl(service, '/folder'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: notUtf8 });
    expectErrorBody(refused, 400);
    expect(refused.body.message).toContain('not valid UTF-8');
    const capitals = await call(contentUrl(service, '/folder'), { method: 'POST', headers: { 'content-type': 'Application/JSON; charset=UTF-8' }, body: JSON.stringify({ name: 'capital-type' }) });
    expect(capitals.status).toBe(201);
  });

  it('properties nested thousands of levels deep', async () => {
    const content = await newContent(service, { name: 'deep.txt' });
    const deep = `{"properties":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    const answer = await call(contentUrl(service, `/content/${content.id}`), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: deep });
    expectErrorBody(answer, 400);
    expect(answer.body.message).toMatch(/nested|deep/);
  });

  it('a multipart request without a boundary, and one cut short', async () => {
    const noBoundary = await call(contentUrl(service, '/content'), { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'garbage' });
    expectErrorBody(noBoundary, 400);
    const cut = await call(contentUrl(service, '/content'), { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, body: '--zzz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc' });
    expectErrorBody(cut, 400);
  });

  it('a multipart request refused after its file part arrived leaves no bytes behind', async () => {
    const content = await newContent(service, { name: 'two-parts-target.txt' });
    const before = await storedFiles(service);
    const twoFiles = () => {
      const form = new FormData();
      form.append('file', new Blob([Buffer.from('first')]), 'a.txt');
      form.append('file', new Blob([Buffer.from('second')]), 'b.txt');
      return form;
    };
    const otherFile = new FormData();
    otherFile.append('file', new Blob([Buffer.from('first')]), 'a.txt');
    otherFile.append('other', new Blob([Buffer.from('other')]), 'o.txt');
    for (const [label, answer] of [
      ['create, two files', await call(contentUrl(service, '/content'), { method: 'POST', body: twoFiles() })],
      ['replace, two files', await call(contentUrl(service, `/content/${content.id}/resource`), { method: 'PUT', body: twoFiles() })],
      ['create, another file part', await call(contentUrl(service, '/content'), { method: 'POST', body: otherFile })],
      [
        'create, cut after the file',
        await call(contentUrl(service, '/content'), {
          method: 'POST',
          headers: { 'content-type': 'multipart/form-data; boundary=XX' },
          body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabcdef\r\n--XX\r\nContent-Disposition: form-data; name="name"\r\n\r\nzz',
        }),
      ],
    ] as const) {
      expect({ label, status: answer.status }).toEqual({ label, status: 400 });
    }
    expect(await storedFiles(service)).toEqual(before);
  });

  it("a part named 'file' without a file name, and an uploadId field beside the file, are 400s that say so", async () => {
    const textField = new FormData();
    textField.append('file', 'just text');
    const asText = await call(contentUrl(service, '/content'), { method: 'POST', body: textField });
    expectErrorBody(asText, 400);
    expect(asText.body.message).toContain('came as a text field');
    const withUploadId = new FormData();
    withUploadId.append('file', new Blob([Buffer.from('bytes')]), 'u.txt');
    withUploadId.append('uploadId', 'some-upload');
    const refused = await call(contentUrl(service, '/content'), { method: 'POST', body: withUploadId });
    expectErrorBody(refused, 400);
    expect(refused.body.message).toContain("unknown field 'uploadId'");
  });

  it('a client that hangs up in the middle of a multipart upload', async () => {
    const http = await import('node:http');
    const { readdirSync } = await import('node:fs');
    const temp = `${service.config.contentStoragePath}/.tmp`;
    const url = new URL(contentUrl(service, '/content'));
    const request = http.request(url, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=cut', 'content-length': '10000000' } });
    request.on('error', () => undefined);
    request.write('--cut\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n');
    request.write(Buffer.alloc(256 * 1024, 1));
    const until = Date.now() + 5_000;
    while (readdirSync(temp).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(readdirSync(temp)).toHaveLength(1);
    request.destroy();
    // the service notices, and removes the partial file
    while (readdirSync(temp).length > 0 && Date.now() < until + 5_000) await new Promise((r) => setTimeout(r, 20));
    expect(readdirSync(temp)).toEqual([]);
    expect((await uploadContent(service, { name: 'after-the-cut.txt' })).status).toBe(201);
  });

  it('a client that hangs up in the middle of a download', async () => {
    const big = await newContent(service, { name: 'big.bin', bytes: new Uint8Array(32 * 1024 * 1024).fill(7) });
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const response = await fetch(contentUrl(service, `/content/${big.id}/download`), { signal: controller.signal });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
    }
    // the service is still there, and serves the whole file
    const whole = await fetch(contentUrl(service, `/content/${big.id}/download`));
    expect((await whole.arrayBuffer()).byteLength).toBe(32 * 1024 * 1024);
  });

  it('bytes missing from or truncated in the content store: a 503 before any byte is sent', async () => {
    const fs = await import('node:fs/promises');
    const truncated = await newContent(service, { name: 'truncated.bin', bytes: 'twelve bytes' });
    const missing = await newContent(service, { name: 'missing.bin', bytes: 'twelve bytes' });
    const root = service.config.contentStoragePath;
    await fs.truncate(`${root}/${truncated.resource.resourceSource.path}`, 5);
    await fs.rm(`${root}/${missing.resource.resourceSource.path}`);
    for (const content of [truncated, missing]) {
      const answer = await call(contentUrl(service, `/content/${content.id}/download`));
      expectErrorBody(answer, 503);
      expect(answer.body).toMatchObject({ reasonCode: 'unavailable', message: expect.stringContaining('not in the content store') });
    }
  });

  it('JSON bodies over 1 MiB, on the REST layer and on GraphQL', async () => {
    const huge = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
    expectErrorBody(await call(contentUrl(service, '/folder'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: huge }), 413);
    const graphql = await fetch(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.adminSession}` },
      body: JSON.stringify({ query: `{ me { userName } }`, variables: { pad: 'x'.repeat(2 * 1024 * 1024) } }),
    });
    expect(graphql.status).toBe(413);
  });

  it('a path that tries to leave the store', async () => {
    expectErrorBody(await call(contentUrl(service, '/content/..%2F..%2Fetc%2Fpasswd/download')), 404);
  });

  it('an HTTP/1.1 request without Host is a 400 with the error body (Node answered an empty one); HTTP/1.0 needs none; HTTP/2.0 in a request line is a 505', async () => {
    const net = await import('node:net');
    const { port } = new URL(service.baseUrl);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(request));
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const without = await raw('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(without).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(without.slice(without.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, reasonCode: 'illegalArguments', message: 'an HTTP/1.1 request needs a Host header' });
    expect(await raw('GET /healthz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    // a request line of another HTTP version is not served as HTTP/1.1
    const other = await raw('GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n');
    expect(other).toMatch(/^HTTP\/1\.1 505 /);
    expect(JSON.parse(other.slice(other.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 505, reasonCode: 'illegalArguments', message: expect.stringContaining('HTTP/2.0 is not supported') });
  });

  it('an Expect the service does not know is a 417 with the error body (Node answered an empty one)', async () => {
    const http = await import('node:http');
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(new URL(contentUrl(service, '/folder')), { method: 'POST', headers: { 'content-type': 'application/json', expect: 'bogus' } }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      request.on('error', reject);
      request.end('{"name":"expected"}');
    });
    expectErrorBody({ status: answer.status, body: JSON.parse(answer.body) }, 417);
    expect(JSON.parse(answer.body)).toMatchObject({ reasonCode: 'illegalArguments', message: "Expect: 'bogus' is not supported (only 100-continue)" });
  });
});
