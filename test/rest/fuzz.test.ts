import fs from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newContent, newFolder } from '../helpers/entries.js';
import { checkAnswer } from '../helpers/openapi.js';
import { adminUrl, call, json, startTestService, type TestService } from '../helpers/service.js';

/*
 * Schema-driven fuzzing of the REST layer (DESIGN §13): requests generated from the OpenAPI document
 * the service serves — every path and method, its parameters and bodies, good values and mutated ones
 * (wrong types, repeated, missing, unknown fields, hostile text) — as an administrator, a user, no
 * session or a bogus one. Each answer: no 5xx, a status the document declares, a body its schema
 * accepts, within 2 s. Afterwards the database is consistent. FUZZ_REQUESTS sets the number: 20,000
 * in the suite (30 s on 2 cores alone), 25,000 with `npm run fuzz`.
 */

const requests = Number(process.env.FUZZ_REQUESTS ?? 20_000);
/** requests sent at once: a client's pace on a shared 2-core machine, so that 2 s means a slow answer, not a queue */
const concurrency = 8;
const slowest = 2_000;
/** a login checks its password with scrypt (DESIGN §9: memory-hard on purpose, in the 4-thread pool), a new user's is hashed with it; concurrent ones queue on 2 cores */
const slowestHashing = 5_000;

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  example?: unknown;
  examples?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  pattern?: string;
}
interface Parameter {
  name: string;
  in: 'path' | 'query';
  schema: Schema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { type: string; schema: Schema };
}
interface FuzzRequest {
  operation: Operation;
  session: 'admin' | 'user' | 'none' | 'bogus';
  path: Record<string, string>;
  query: [string, string][];
  body?: { kind: 'json-text'; text: string } | { kind: 'form'; fields: [string, string][] } | { kind: 'multipart'; fields: [string, string][]; file?: string } | { kind: 'raw'; type: string; text: string };
}

let service: TestService;
let userSession: string;
let operations: Operation[];
let components: Record<string, Schema>;
const pools = { ids: ['no-such-id', ''] as string[], repositories: ['default', 'fuzz', 'no-such-repository'], userNames: ['fuzz-user', 'fuzz-other', 'no-such-user'] };
/** uploads a call may leave pending (swept later when unused): each POST …/uploads answered, each deep check run (its scenario stages one) */
let pendingAllowed = 0;

const hostile = [
  '',
  ' ',
  'TRUE',
  'false',
  '0',
  '-1',
  '1.5',
  '1e309',
  '99999999999999999999',
  '{}',
  '[]',
  'null',
  '{"a":',
  "' or 1=1 --",
  '../../etc/passwd',
  '%00',
  'a\u0000b',
  '\u202egnp.exe',
  'ß',
  '😀',
  'x'.repeat(3000),
  'name,asc',
  'Content.name',
];

const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(components[schema.$ref.split('/').pop()!]!) : schema);

/** Values a schema describes, as text: its enums, consts, examples, and values of its type; a name ending in Id draws from known ids. */
function goodTexts(name: string, schema: Schema): string[] {
  const s = resolve(schema);
  const values: unknown[] = [...(s.enum ?? []), ...(s.const !== undefined ? [s.const] : []), ...(s.example !== undefined ? [s.example] : []), ...(s.examples ?? [])];
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) values.push(...goodTexts(name, branch));
  if (s.items) values.push(...goodTexts(name, s.items));
  if (/Ids?$/.test(name) || name === 'id') values.push(...pools.ids);
  if (/repositoryName/i.test(name)) values.push(...pools.repositories);
  if (/userName/.test(name)) values.push(...pools.userNames);
  if (/^(limit|offset)$/.test(name)) values.push('0', '1', '10', '1000', '1001');
  if (name === 'orderBy') values.push('name', 'name,desc', 'createdAt', 'nope');
  if (name === 'condition') values.push("name = 'a'", "tags in ('x')", 'name =', 'fullText(\'x\')');
  if (values.length === 0) values.push('fuzz', 'a', 'x y');
  return values.flatMap((value) => (Array.isArray(value) ? value : [value])).map((value) => (typeof value === 'string' ? value : JSON.stringify(value)));
}

const textFor = (name: string, schema: Schema) => fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...goodTexts(name, schema)) }, { weight: 2, arbitrary: fc.constantFrom(...hostile) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) });

/** A JSON value for `schema`: of its type mostly, of another sometimes. */
function jsonFor(name: string, schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const branches = [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
  if (branches.length > 0) return fc.oneof(...branches.map((branch) => jsonFor(name, branch, depth)));
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : ['string'];
  const wrong = fc.oneof(fc.constant(null), fc.integer(), fc.boolean(), fc.constant({}), fc.constant([]), fc.constantFrom(...hostile));
  const right = fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      if (s.enum) return fc.constantFrom(...s.enum, ...s.enum.map((value) => (typeof value === 'string' ? value.toUpperCase() : value)));
      if (type === 'boolean') return fc.boolean();
      if (type === 'integer' || type === 'number') return fc.oneof(fc.integer({ min: -1, max: 2000 }), fc.constantFrom(2 ** 31, 1.5, -0));
      if (type === 'null') return fc.constant(null);
      if (type === 'array') return fc.array(s.items && depth < 3 ? jsonFor(name, s.items, depth + 1) : fc.string(), { maxLength: 4 });
      if (type === 'object') {
        if (!s.properties || depth >= 3) return fc.dictionary(fc.constantFrom('a', 'b', 'nested', '__proto__', 'constructor'), fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxKeys: 3 });
        return objectFor(s, depth + 1);
      }
      return textFor(name, s);
    }),
  );
  return fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

/** An object of `schema`'s properties: each present or not (required ones mostly), sometimes an unknown one. */
function objectFor(schema: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(schema.properties ?? {});
  return fc
    .tuple(
      ...entries.map(([name, property]) => fc.option(jsonFor(name, property, depth), { freq: (schema.required ?? []).includes(name) ? 8 : 2, nil: undefined })),
      fc.option(fc.constantFrom('unknownField', 'uploadId', '_type'), { freq: 6, nil: undefined }),
    )
    .map((values) => {
      const object: Record<string, unknown> = {};
      entries.forEach(([name], index) => {
        if (values[index] !== undefined) object[name] = values[index];
      });
      const extra = values[entries.length] as string | undefined;
      if (extra) object[extra] = 'x';
      return object;
    });
}

/** Form or multipart fields from an object schema: each as text, list fields repeated. */
const fieldsFor = (schema: Schema) =>
  fc
    .tuple(
      ...Object.entries(resolve(schema).properties ?? {})
        .filter(([name]) => name !== 'file')
        .map(([name, property]) => fc.option(fc.array(textFor(name, property), { minLength: 1, maxLength: 2 }).map((values) => values.map((value) => [name, value] as [string, string])), { freq: 2, nil: undefined })),
      fc.option(fc.constant([['unknownField', 'x'] as [string, string]]), { freq: 8, nil: undefined }),
    )
    .map((groups) => groups.flatMap((group) => group ?? []));

function bodyFor(operation: Operation): fc.Arbitrary<FuzzRequest['body']> {
  const body = operation.body;
  const garbage = fc.oneof(
    fc.record({ kind: fc.constant('json-text' as const), text: fc.constantFrom('{"a":', '[]', '"text"', '1e999', '{"a":'.repeat(100), '') }),
    fc.record({ kind: fc.constant('raw' as const), type: fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data'), text: fc.constantFrom('hello', '--x--', '') }),
  );
  // fetch sends no body with a GET
  if (!body) return operation.method === 'GET' ? fc.constant(undefined) : fc.option(garbage, { freq: 10, nil: undefined });
  if (body.type === 'application/json') {
    return fc.oneof({ weight: 8, arbitrary: objectFor(resolve(body.schema)).map((object) => ({ kind: 'json-text' as const, text: JSON.stringify(object) })) }, { weight: 1, arbitrary: garbage });
  }
  if (body.type === 'multipart/form-data' && resolve(body.schema).properties?.file) {
    return fc.oneof(
      { weight: 8, arbitrary: fc.record({ kind: fc.constant('multipart' as const), fields: fieldsFor(body.schema), file: fc.option(fc.constantFrom('hello world', '%PDF-1.4 not really', ''), { freq: 6, nil: undefined }) }) },
      { weight: 1, arbitrary: garbage },
    );
  }
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('form' as const), fields: fieldsFor(body.schema) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('multipart' as const), fields: fieldsFor(body.schema) }) },
    { weight: 1, arbitrary: garbage },
  );
}

function requestFor(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const pathParameters = operation.parameters.filter((p) => p.in === 'path');
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  return fc.record({
    operation: fc.constant(operation),
    // logging out ends the session the other requests use: only without one, or a bogus one
    session: operation.path === '/logout' ? fc.constantFrom('none' as const, 'bogus' as const) : fc.constantFrom('admin' as const, 'admin' as const, 'user' as const, 'user' as const, 'none' as const, 'bogus' as const),
    path: fc.record(Object.fromEntries(pathParameters.map((p) => [p.name, p.name === 'repository' ? fc.constantFrom(...pools.repositories, 'a b', '%') : fc.oneof(fc.constantFrom(...pools.ids.filter(Boolean)), fc.constantFrom(...hostile.filter(Boolean)))]))),
    query: fc
      .tuple(...queryParameters.map((p) => fc.option(fc.array(textFor(p.name, p.schema), { minLength: 1, maxLength: 2 }), { freq: 2, nil: undefined })))
      .map((values) => queryParameters.flatMap((p, index) => (values[index] ?? []).map((value) => [p.name, value] as [string, string]))),
    body: bodyFor(operation),
  });
}

/** the slow requests sent again, one after another */
let resent: Promise<unknown> = Promise.resolve();
type Answer = Awaited<ReturnType<typeof answer>>;

const isDeepCheck = (operation: Operation) => operation.path.includes('/repository/deep-check/by-');
/** a deep check stages an upload in its scratch folder: the job an asynchronous start began may still hold it when the fuzzing ends */
const stagesUpload = (operation: Operation) => isDeepCheck(operation) || operation.path.includes('/repository/async-deep-check/by-');

/** The answer to one request, and how long it took. */
async function answer(request: FuzzRequest) {
  const { operation } = request;
  let pathname = operation.path;
  for (const [name, value] of Object.entries(request.path)) pathname = pathname.replace(`{${name}}`, encodeURIComponent(value));
  const query = new URLSearchParams(request.query);
  const headers: Record<string, string> = {};
  if (request.session === 'admin') query.set('sessionId', service.adminSession);
  if (request.session === 'user') headers.authorization = `Bearer ${userSession}`;
  if (request.session === 'bogus') query.set('sessionId', 'not-a-session');
  let body: BodyInit | undefined;
  const b = request.body;
  if (b?.kind === 'json-text') [body, headers['content-type']] = [b.text, 'application/json'];
  if (b?.kind === 'raw') [body, headers['content-type']] = [b.text, b.type];
  if (b?.kind === 'form') [body, headers['content-type']] = [new URLSearchParams(b.fields).toString(), 'application/x-www-form-urlencoded'];
  if (b?.kind === 'multipart') {
    const form = new FormData();
    for (const [name, value] of b.fields) form.append(name, value);
    if (b.file !== undefined) form.append('file', new Blob([b.file]), 'fuzz.txt');
    body = form;
  }
  const url = `${service.baseUrl}/api/v1${pathname}?${query}`;
  const started = performance.now();
  const response = await fetch(url, { method: operation.method, headers, body });
  const text = await response.text();
  return { url, pathname, query, response, text, elapsed: performance.now() - started };
}

/** An answer slower than this is measured again (one at a time): a slow path is slow again, a moment of queueing behind other test files on 2 cores is not. */
const hashesAPassword = (operation: Operation) => operation.path === '/authenticate' || (operation.method === 'POST' && operation.path.endsWith('/user'));
const boundOf = (operation: Operation) => (hashesAPassword(operation) ? slowestHashing : slowest);

async function send(request: FuzzRequest): Promise<void> {
  const { operation } = request;
  const b = request.body;
  const { url, pathname, query, response, text, elapsed } = await answer(request);
  const where = `${operation.method} ${pathname}?${query} ${JSON.stringify(b)?.slice(0, 300)}`;
  expect(response.status, `${where}: ${text.slice(0, 300)}`).toBeLessThan(500);
  if (!isDeepCheck(operation) && elapsed >= boundOf(operation)) {
    const again = (await (resent = resent.then(() => answer(request)))) as Answer;
    if (again.response.status === 201 && operation.path.endsWith('/uploads')) pendingAllowed++;
    expect(again.elapsed, `${where} took ${Math.round(elapsed)} ms, and ${Math.round(again.elapsed)} ms sent again`).toBeLessThan(boundOf(operation));
  }
  const contentType = response.headers.get('content-type');
  let parsed: unknown = text;
  if (contentType?.startsWith('application/json') && text) parsed = JSON.parse(text);
  await checkAnswer(operation.method, url, { status: response.status, body: parsed, contentType });
  // what the fuzzing made becomes a target of later requests
  if (response.status < 300 && parsed && typeof parsed === 'object') {
    const id = (parsed as { id?: unknown; uploadId?: unknown }).id ?? (parsed as { uploadId?: unknown }).uploadId;
    if (typeof id === 'string' && pools.ids.length < 200) pools.ids.push(id);
  }
  if ((response.status === 201 && operation.path.endsWith('/uploads')) || (response.status === 200 && stagesUpload(operation))) pendingAllowed++;
}

beforeAll(async () => {
  service = await startTestService();
  userSession = await service.createUserSession('fuzz-user');
  const document = (await call(`${service.baseUrl}/api/v1/openapi.json`)).body;
  components = document.components.schemas;
  operations = Object.entries(document.paths as Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>>).flatMap(([p, item]) =>
    Object.entries(item).map(([method, operation]) => {
      const content = Object.entries(operation.requestBody?.content ?? {});
      return { method: method.toUpperCase(), path: p, parameters: operation.parameters ?? [], body: content.length > 0 ? { type: content[0]![0], schema: content[0]![1].schema } : undefined };
    }),
  );
  // targets: a second repository (its deletion among the fuzzed calls), folders and contents of both kinds of caller
  const repository = await call(adminUrl(service, '/repository'), json('POST', { name: 'fuzz' }));
  pools.ids.push(repository.body.id);
  const folder = await newFolder(service, 'fuzz-folder');
  const content = await newContent(service, { name: 'fuzz.txt', parentId: folder.id, tags: ['x'] });
  const userFolder = await newFolder(service, 'user-folder', undefined, userSession);
  pools.ids.push(folder.id, content.id, userFolder.id);
}, 120_000);
afterAll(() => service?.stop());

describe(`schema-driven fuzzing of every REST path (${requests} requests)`, () => {
  it('never answers a 5xx, an undeclared status or a body its schema refuses, never slower than 2 s; the database stays consistent', async () => {
    expect(operations.length).toBeGreaterThan(60);
    // the synchronous deep check runs its whole scenario (seconds, DEEP_CHECK_TIMEOUT_MS): drawn rarely, and not held to 2 s
    const perOperation = fc.oneof(...operations.map((operation) => ({ weight: isDeepCheck(operation) ? 1 : 20, arbitrary: requestFor(operation) })));
    const started = Date.now();
    const seed = Number(process.env.FUZZ_SEED ?? 2026);
    // every operation at least once, then drawn at random; sent by `concurrency` clients, each sending its next when answered
    const drawn = [...operations.map((operation, index) => fc.sample(requestFor(operation), { numRuns: 1, seed: seed + index })[0]!), ...fc.sample(perOperation, { numRuns: requests - operations.length, seed })];
    let sent = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < drawn.length) {
          const request = drawn[sent++]!;
          await send(request);
        }
      }),
    );
    expect(sent).toBeGreaterThanOrEqual(requests);
    const orm = service.services.orm.em.getConnection();
    const rows = async (sql: string) => orm.execute<Record<string, unknown>[]>(sql);
    // no entry under a folder that is not there (in its repository), no content without its resource
    expect(await rows(`select e.id from entry e where e.parent_id is not null and not exists (select 1 from entry p where p.id = e.parent_id and p.entry_type = 'FOLDER' and p.repository_id = e.repository_id)`)).toEqual([]);
    expect(await rows(`select e.id from entry e where e.entry_type = 'CONTENT' and not exists (select 1 from resource r where r.id = e.resource_id)`)).toEqual([]);
    // no entry of a repository that is gone
    expect(await rows(`select e.id from entry e where not exists (select 1 from repository r where r.id = e.repository_id)`)).toEqual([]);
    // the trigger-kept counts are what the entries say
    expect(
      await rows(`select * from (select repository_id, entry_type, count(*)::bigint as n from entry where is_latest and active and version_status is distinct from 'WORKING_COPY' group by 1, 2) actual
        full join (select repository_id, entry_type, sum(n)::bigint as n from entry_visible_count group by 1, 2 having sum(n) <> 0) kept using (repository_id, entry_type)
        where actual.n is distinct from kept.n`),
    ).toEqual([]);
    // every stored resource has its bytes; an upload left pending is one a POST …/uploads answered or a deep check staged (a failed create drops its own)
    const resources = (await rows(`select storage_path, state, name, creator, created_at from resource`)) as { storage_path: string; state: string }[];
    for (const resource of resources) expect(await service.services.contentStore.exists(resource.storage_path), resource.storage_path).toBe(true);
    const pending = resources.filter((resource) => resource.state === 'pending');
    expect(pending.length, JSON.stringify(pending)).toBeLessThanOrEqual(pendingAllowed);
    expect(await fs.readdir(path.join(service.config.contentStoragePath, '.tmp')).catch(() => [])).toEqual([]);
    console.info(`fuzzing: ${sent} requests over ${operations.length} operations in ${Math.round((Date.now() - started) / 1000)} s`);
  }, Math.max(600_000, requests * 20));
});
