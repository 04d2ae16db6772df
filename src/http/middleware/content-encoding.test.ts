import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../../test/helpers/entries.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const encoded = (path: string, type: string, body: Buffer, encoding = 'gzip') =>
  call(path, { method: 'POST', headers: { 'content-type': type, 'content-encoding': encoding }, body: new Uint8Array(body) });

describe('request bodies with a Content-Encoding', () => {
  it('are refused with 415 and Accept-Encoding: identity on REST, uploads and /graphql, and nothing is stored', async () => {
    const folder = gzipSync(JSON.stringify({ name: 'gzipped-folder' }));
    const attempts = [
      await encoded(`${service.contentBase}/folder?sessionId=${service.adminSession}`, 'application/json', folder),
      await encoded(`${service.contentBase}/folder?sessionId=${service.adminSession}`, 'application/json', Buffer.from('{"name":"unknown-coding"}'), 'x-unknown'),
      await encoded(`${service.contentBase}/uploads?sessionId=${service.adminSession}&fileName=packed.txt`, 'text/plain', gzipSync('packed text')),
      await encoded(`${service.baseUrl}/graphql`, 'application/json', gzipSync(JSON.stringify({ query: '{ me { userName } }' }))),
    ];
    for (const answer of attempts) {
      expect(answer.status).toBe(415);
      expect(answer.headers.get('accept-encoding')).toBe('identity');
      expect(answer.body).toMatchObject({ status: 415, reasonCode: 'unsupportedMediaType', message: expect.stringMatching(/^Content-Encoding '(gzip|x-unknown)' is not accepted/) });
    }
    expect(await sql(service, `select id from entry where name in ('gzipped-folder', 'unknown-coding')`)).toEqual([]);
    expect(await sql(service, `select id from resource where name = 'packed.txt'`)).toEqual([]);
  });

  it('a transfer coding other than chunked is a 501 with the error body', async () => {
    const http = await import('node:http');
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${service.contentBase}/folder?sessionId=${service.adminSession}`);
      const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'gzip, chunked' } }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      request.on('error', reject);
      request.end(gzipSync('{"name":"gzip-chunked"}'));
    });
    expect(answer.status).toBe(501);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 501, message: "Transfer-Encoding 'gzip, chunked' is not supported: send the body chunked or with a Content-Length" });
    expect(await sql(service, `select id from entry where name = 'gzip-chunked'`)).toEqual([]);
  });

  it('takes identity as no encoding', async () => {
    const answer = await encoded(`${service.contentBase}/folder?sessionId=${service.adminSession}`, 'application/json', Buffer.from('{"name":"identity-folder"}'), 'identity');
    expect(answer.status).toBe(201);
  });
});
