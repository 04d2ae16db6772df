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

  it('takes identity as no encoding', async () => {
    const answer = await encoded(`${service.contentBase}/folder?sessionId=${service.adminSession}`, 'application/json', Buffer.from('{"name":"identity-folder"}'), 'identity');
    expect(answer.status).toBe(201);
  });
});
