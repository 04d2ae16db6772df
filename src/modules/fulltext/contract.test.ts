import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, extracted, newContent } from '../../../test/helpers/entries.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

/**
 * The contract every text index keeps (src/modules/fulltext/text-index.ts), run against the Postgres
 * index always and against a real Meilisearch when MEILISEARCH_URL names one (README: "Full-text
 * contract tests against Meilisearch").
 */
const backends: { name: string; env: Record<string, string> }[] = [{ name: 'postgres', env: {} }];
if (process.env.MEILISEARCH_URL) {
  backends.push({ name: 'meilisearch', env: { MEILISEARCH_URL: process.env.MEILISEARCH_URL, ...(process.env.MEILISEARCH_API_KEY ? { MEILISEARCH_API_KEY: process.env.MEILISEARCH_API_KEY } : {}) } });
} else {
  console.log('full-text contract: the Meilisearch run is left out: MEILISEARCH_URL is not set (no Meilisearch server configured); the Postgres run goes on');
}

describe.each(backends)('the text index contract: $name', ({ env }) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(env);
  });
  afterAll(() => service?.stop());

  const indexed = async (name: string, text: string, base?: string) => {
    const content = await newContent(service, { name, bytes: text, mimeType: 'text/plain', base });
    await extracted(service, content.id);
    return content;
  };
  const ids = async (path: string, query: Record<string, string>, base?: string) => {
    const { status, body } = await call(contentUrl(service, path, query, service.adminSession, base));
    expect(status, JSON.stringify(body)).toBe(200);
    return (body.entries as { id: string }[]).map((e) => e.id).sort();
  };

  it('finds a content by the words and phrases of its text, alone and with SQL terms', async () => {
    const a = await indexed('contract-a.txt', 'the walrus sings in the harbour');
    const b = await indexed('contract-b.txt', 'harbour walls of granite');
    expect(await ids('/content/search/by-text', { searchText: 'harbour' })).toEqual([a.id, b.id].sort());
    expect(await ids('/content/search/by-text', { searchText: 'walrus harbour' })).toEqual([a.id]);
    expect(await ids('/content/search/by-text', { searchText: '"harbour walls"' })).toEqual([b.id]);
    expect(await ids('/content/search/by-condition', { condition: "fullText('harbour') and name = 'contract-b.txt'" })).toEqual([b.id]);
    expect(await ids('/content/search/by-condition', { condition: "fullText('harbour') and not fullText('granite')" })).toEqual([a.id]);
    expect(await ids('/content/search/by-text', { searchText: 'nosuchwordanywhere' })).toEqual([]);
  });

  it('a new version replaces the old text; another repository does not see it', async () => {
    const content = await indexed('contract-v.txt', 'oldcontractword');
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('newcontractword')]), 'contract-v.txt');
    const replaced = await call(contentUrl(service, `/content/${content.id}/resource`), { method: 'PUT', body: form });
    expect(replaced.status).toBe(200);
    await extracted(service, replaced.body.id);
    expect(await ids('/content/search/by-text', { searchText: 'newcontractword' })).toEqual([replaced.body.id]);
    expect(await ids('/content/search/by-text', { searchText: 'oldcontractword' })).toEqual([]);

    expect((await service.graphql('mutation { createRepository(input: { name: "other" }) { id } }')).errors).toBeUndefined();
    const other = `${service.baseUrl}/api/v1/access.svc.content.other/v1`;
    await indexed('elsewhere.txt', 'newcontractword', other);
    expect(await ids('/content/search/by-text', { searchText: 'newcontractword' })).toEqual([replaced.body.id]);
    expect(await ids('/content/search/by-text', { searchText: 'newcontractword' }, other)).toHaveLength(1);
  });
});
