import { gunzipSync } from 'node:zlib';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../rest-compat/openapi.js';
import { graphqlRoutes } from '../../rest-compat/routes/index.js';
import { transferOperations } from '../../rest-compat/transfer-paths.js';
import { checkAnswer } from '../helpers/openapi.js';
import { startTestService, type TestService } from '../helpers/service.js';

let service: TestService;
let document: any;

beforeAll(async () => {
  service = await startTestService();
  const response = await fetch(`${service.baseUrl}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  document = await response.json();
});
afterAll(() => service?.stop());

describe('GET {base_url}/api/v1/openapi.json (DESIGN §13)', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: '/api/v1' }]);
  });

  it('describes every path and method of the REST table and of the byte transfer, the repository name as a path parameter', () => {
    for (const operation of [...graphqlRoutes, ...transferOperations]) {
      const item = document.paths[openApiPath(operation.path)];
      expect(item?.[operation.method.toLowerCase()], `${operation.method} ${operation.path}`).toBeDefined();
    }
    const createFolder = document.paths['/access.svc.content.{repository}/v1/folder'].post;
    expect(createFolder.parameters).toContainEqual(expect.objectContaining({ in: 'path', name: 'repository', required: true }));
    expect(createFolder.requestBody.content['application/json'].schema).toBeDefined();
    const getContent = document.paths['/access.svc.content.{repository}/v1/content/{id}'].get;
    expect(getContent.parameters.map((p: { name: string }) => p.name)).toEqual(['repository', 'id']);
  });

  it('has the session as its security scheme (query sessionId and bearer), logging in needing none', () => {
    expect(document.components.securitySchemes).toEqual({
      sessionId: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'sessionId' }),
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(document.security).toEqual([{ sessionId: [] }, { bearer: [] }]);
    expect(document.paths['/authenticate'].post.security).toEqual([]);
  });

  it('tags each operation with its domain', () => {
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual(['content', 'administration', 'session']);
    expect(document.paths['/access.svc.content.{repository}/v1/home'].get.tags).toEqual(['content']);
    expect(document.paths['/access.svc.admin/v1/repositories'].get.tags).toEqual(['administration']);
    expect(document.paths['/logout'].post.tags).toEqual(['session']);
  });

  it("declares each answer: the spec's _type, date form and fields in the schemas, every error with the error body, examples", () => {
    const schemas = document.components.schemas;
    expect(schemas.Content.properties._type).toEqual({ type: 'string', const: 'svc.model.content.Content' });
    expect(schemas.Folder.properties._type.const).toBe('svc.model.content.Folder');
    expect(schemas.EntriesResponse.properties._type.const).toBe('svc.model.content.service.v1.request.crud.EntriesResponse');
    expect(schemas.Date).toMatchObject({ type: 'string', pattern: expect.stringContaining('\\.\\d{3}[+-]\\d{4}'), example: '2026-11-22T23:05:07.089+0000' });
    expect(schemas.Content.properties.createdAt).toEqual({ $ref: '#/components/schemas/Date' });
    expect(schemas.ErrorResponse.example).toMatchObject({ _type: 'svc.model.error.ErrorResponse', reasonCode: 'notFound' });
    const deleteFolder = document.paths['/access.svc.content.{repository}/v1/folder/{id}'].delete;
    expect(Object.keys(deleteFolder.responses)).toEqual(expect.arrayContaining(['204', '400', '401', '403', '404', '409', '500']));
    expect(deleteFolder.responses['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    expect(deleteFolder.responses['204'].content).toBeUndefined();
    const upload = document.paths['/access.svc.content.{repository}/v1/content'].post.requestBody.content['multipart/form-data'].schema;
    expect(upload.required).toContain('file');
    expect(Object.keys(upload.properties)).toEqual(expect.arrayContaining(['file', 'name', 'parentId', 'tags', 'properties']));
  });
});

describe('the answers checked against the document (test/helpers/openapi.ts)', () => {
  const contentPath = () => `${service.contentBase}/folder/some-id`;
  it('passes a declared status with a body its schema accepts', async () => {
    await expect(checkAnswer('GET', contentPath(), { status: 404, contentType: 'application/json', body: { _type: 'svc.model.error.ErrorResponse', status: 404, reasonCode: 'notFound', message: 'no' } })).resolves.toBeUndefined();
  });
  it('fails on a status the document does not declare for the path and method', async () => {
    await expect(checkAnswer('GET', contentPath(), { status: 418, contentType: 'application/json', body: {} })).rejects.toThrow(/answered 418, which the OpenAPI document does not declare/);
  });
  it('fails on a body the declared schema refuses: a field of the wrong shape, a date in another form', async () => {
    const folder = { _type: 'svc.model.content.Folder', id: 'f', active: true, entryType: 'FOLDER', name: 'a', owner: 'o', createdAt: '2026-11-22T23:05:07.089+0000', createdBy: 'o', lastModifiedAt: '2026-11-22T23:05:07.089+0000', lastModifiedBy: 'o', partition: 'p' };
    await expect(checkAnswer('GET', contentPath(), { status: 200, contentType: 'application/json', body: folder })).resolves.toBeUndefined();
    await expect(checkAnswer('GET', contentPath(), { status: 200, contentType: 'application/json', body: { ...folder, createdAt: '2026-11-22T23:05:07.089Z' } })).rejects.toThrow(/schema refuses/);
    await expect(checkAnswer('GET', contentPath(), { status: 404, contentType: 'application/json', body: { message: 'no' } })).rejects.toThrow(/schema refuses/);
  });
});

describe('GET {base_url}/api/docs: the reference page (DESIGN §13)', () => {
  const get = (path: string, encoding = 'gzip') => fetch(`${service.baseUrl}/api/docs${path}`, { headers: { 'accept-encoding': encoding } });
  const text = async (response: Response) => Buffer.from(await response.arrayBuffer()).toString('utf8');

  it('is served compressed, with a CSP that lets the page reach no other origin', async () => {
    const { request } = await import('node:http');
    // fetch decompresses by itself: read the raw bytes to see them compressed
    const raw = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      request(`${service.baseUrl}/api/docs/swagger-ui-bundle.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(raw.body).toString('utf8')).toContain('SwaggerUIBundle');
    expect(raw.body.length).toBeLessThan(Number(gunzipSync(raw.body).length) / 2);
    const page = await get('');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    for (const directive of csp.split(';').map((part) => part.trim())) {
      // every source a directive allows is this origin (or inline data): no host, no scheme of the network
      expect(directive, directive).not.toMatch(/https?:|\*|\bwss?:/);
    }
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
  });

  it('names no external URL: the page loads its own assets, the starter reads the document of the same origin with the validator badge off', async () => {
    const html = await text(await get(''));
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9]/i);
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources).toEqual(['docs/swagger-ui.css', 'docs/swagger-ui-bundle.js', 'docs/reference.js']);
    for (const source of sources) expect((await get(`/${source!.replace('docs/', '')}`)).status, source).toBe(200);
    const starter = await text(await get('/reference.js'));
    expect(starter).not.toMatch(/https?:\/\//);
    expect(starter).toContain("new URL('v1/openapi.json', window.location.href)");
    expect(starter).toContain('validatorUrl: null');
    const css = await text(await get('/swagger-ui.css'));
    // the stylesheet's images are inline (data:), its fonts the system's: nothing it would fetch
    expect(css).not.toMatch(/@import|url\((?!["']?data:)/);
  });

  it('the document the page reads is answered without a session', async () => {
    expect((await fetch(`${service.baseUrl}/api/v1/openapi.json`)).status).toBe(200);
  });
});
