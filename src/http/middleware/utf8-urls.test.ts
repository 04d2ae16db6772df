import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent } from '../../../test/helpers/entries.js';
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

  it('in a form body are a 400 naming the field, and nothing is created; UTF-8 escapes and + are taken', async () => {
    const policies = `${service.adminBase}/policies?sessionId=${service.adminSession}`;
    const before = (await call(policies)).body.length;
    const form = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    const inheritance = `${service.adminBase}/policy/inheritance?sessionId=${service.adminSession}`;
    // a UTF-16 surrogate encoded as UTF-8 (CESU), which the review saw stored as three U+FFFD
    for (const [body, field] of [
      ['name=%ED%A0%80&technicalName=cesu', 'name'],
      ['name=ok&technicalName=a%FFb', 'technicalName'],
      ['name=ok&inheritTags=true&inheritAcl=%C3%28', 'inheritAcl'],
    ]) {
      const refused = await call(inheritance, form(body));
      expect(refused, body).toMatchObject({ status: 400, body: { reasonCode: 'illegalArguments', message: `form field '${field}' is not valid UTF-8 once percent-decoded` } });
    }
    expect((await call(policies)).body).toHaveLength(before);
    const euro = await call(inheritance, form('name=%E2%82%AC+100%25+sure&technicalName=euro'));
    expect(euro).toMatchObject({ status: 201, body: { name: '€ 100% sure' } });

    // the check-in's form body too
    const content = await newContent(service, { name: 'form-check-in.txt' });
    expect((await call(`${service.contentBase}/content/${content.id}/check-out?sessionId=${service.adminSession}`, { method: 'POST' })).status).toBe(200);
    const checkIn = await call(`${service.contentBase}/content/${content.id}/check-in?sessionId=${service.adminSession}`, form('comment=%FF'));
    expect(checkIn).toMatchObject({ status: 400, body: { message: "form field 'comment' is not valid UTF-8 once percent-decoded" } });
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
