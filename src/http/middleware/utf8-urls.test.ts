import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const refusedAsNotUtf8 = (answer: { status: number; body: any }) => {
  expect(answer.status).toBe(400);
  expect(answer.body).toMatchObject({ reasonCode: 'illegalArguments', message: 'the request URL is not valid UTF-8 once percent-decoded' });
};

describe('bytes that are not UTF-8', () => {
  it('in a query or a path are a 400, not U+FFFD in their place; UTF-8 escapes and a bare % are taken', async () => {
    refusedAsNotUtf8(await call(`${service.contentBase}/content/search?sessionId=${service.adminSession}&name=%FF`));
    refusedAsNotUtf8(await call(`${service.contentBase}/content/%C3%28?sessionId=${service.adminSession}`));
    const euro = await call(`${service.contentBase}/content/search?sessionId=${service.adminSession}&name=%E2%82%AC`);
    expect(euro).toMatchObject({ status: 200, body: { count: 0 } });
    const percent = await call(`${service.contentBase}/content/search/by-condition?sessionId=${service.adminSession}&condition=name like '10%'`);
    expect(percent.status).toBe(200);
  });

  it('in a GraphQL body are a 400', async () => {
    const body = Buffer.concat([Buffer.from('{"query":"{ me { userName } }","operationName":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const answer = await call(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${service.adminSession}` },
      body: new Uint8Array(body),
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0]).toMatchObject({ message: 'The request body is not valid UTF-8.', extensions: { reasonCode: 'illegalArguments' } });
  });
});
