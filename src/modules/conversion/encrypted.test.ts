import { readFile } from 'node:fs/promises';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertBytes, finishedJob } from '../../../test/helpers/conversion.js';
import { contentUrl, extracted, newContent, sql } from '../../../test/helpers/entries.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

// Encrypted PDFs (issue 29 item 6): a PDF that opens with an empty password — an owner password only
// (the user password empty), or a user password with an empty owner password, as pdf.js's
// pr6531_2.pdf — opens for rendering, text extraction and MERGE as every reader opens it; one that needs
// a password is refused with a message saying so. Fixtures: test/fixtures/encrypted/README.md.
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ CONV_PDF_DPI: '72' });
});
afterAll(() => service?.stop());

const fixture = (name: string) => readFile(new URL(`../../../../test/fixtures/encrypted/${name}`, import.meta.url));
const ownerOnly = ['owner-only-rc4.pdf', 'owner-only-aes128.pdf', 'owner-only-aes256.pdf', 'empty-owner-password.pdf'];

const found = async (word: string) => {
  const { status, body } = await call(contentUrl(service, '/content/search/by-condition', { condition: `fullText('${word}')` }));
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.entries as { name: string }[]).map((entry) => entry.name);
};

describe('a PDF that opens with an empty password', () => {
  it.each(ownerOnly)('%s renders every page', async (name) => {
    const { job } = await convertBytes(service, await fixture(name), `render-${name}`);
    expect(job.state, JSON.stringify(job.serviceRequestJob)).toBe('Done');
    expect(JSON.parse(job.serviceRequestJob.serializedResult)).toMatchObject({ pages: 2, placeholders: [] });
  });

  it('gives its text to the full-text search', async () => {
    for (const name of ownerOnly) await extracted(service, (await newContent(service, { name: `text-${name}`, bytes: await fixture(name) })).id);
    expect((await found('zeppelin')).filter((name) => name.startsWith('text-')).sort()).toEqual(ownerOnly.map((name) => `text-${name}`).sort());
    expect((await found('quokka')).filter((name) => name.startsWith('text-'))).toHaveLength(ownerOnly.length);
  });

  it('is merged: its pages, decrypted, in an unencrypted PDF whose text is found', async () => {
    const inputs = [];
    for (const name of [...ownerOnly, 'owner-only-rc4.pdf']) inputs.push(await newContent(service, { name: `merge-${inputs.length}-${name}`, bytes: await fixture(name) }));
    const started = await call(
      contentUrl(service, '/convert/merge'),
      json('POST', { contentIds: inputs.map((input) => input.id), resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'decrypted-bundle' } }),
    );
    expect(started.status).toBe(200);
    const job = await finishedJob(service, started.body.jobId);
    expect(job.state, JSON.stringify(job.serviceRequestJob)).toBe('Done');
    const result = JSON.parse(job.serviceRequestJob.serializedResult);
    expect(result).toMatchObject({ pages: 10, pagesPerInput: [2, 2, 2, 2, 2] });
    const download = await fetch(contentUrl(service, `/content/${result.contentId}/download`));
    const merged = await PDFDocument.load(new Uint8Array(await download.arrayBuffer()));
    expect(merged.isEncrypted).toBe(false);
    expect(merged.getPageCount()).toBe(10);
    await extracted(service, result.contentId);
    expect(await found('marmalade')).toContain('decrypted-bundle.pdf');
  });
});

describe('a PDF that needs a user password', () => {
  it('is refused by rendering, with the message naming it', async () => {
    const { job } = await convertBytes(service, await fixture('user-password.pdf'), 'locked.pdf');
    expect(job.state).toBe('panic');
    expect(job.serviceRequestJob).toMatchObject({ reasonCode: 'illegalArguments', errorMessage: 'input resource locked.pdf is encrypted and cannot be opened without its password' });
  });

  it('is refused by MERGE, naming it, and nothing is created', async () => {
    const locked = await newContent(service, { name: 'locked-merge.pdf', bytes: await fixture('user-password.pdf') });
    const open = await newContent(service, { name: 'open-merge.pdf', bytes: await fixture('owner-only-aes256.pdf') });
    const started = await call(contentUrl(service, '/convert/merge'), json('POST', { contentIds: [open.id, locked.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'never' } }));
    const job = await finishedJob(service, started.body.jobId);
    expect(job.serviceRequestJob).toMatchObject({
      state: 'panic',
      reasonCode: 'illegalArguments',
      errorMessage: 'input resource locked-merge.pdf is encrypted and cannot be opened without its password',
    });
    expect(await sql(service, `select id from entry where name = 'never.pdf'`)).toEqual([]);
  });

  it('has no text to search, and its extraction ends (no stuck job)', async () => {
    const locked = await newContent(service, { name: 'locked-text.pdf', bytes: await fixture('user-password.pdf') });
    await extracted(service, locked.id).catch(() => undefined);
    const [job] = await sql<{ state: string }>(service, `select state from service_job where job_name = 'extractText' and ? = any(content_ids)`, [locked.id]);
    expect(['Done', 'panic']).toContain(job?.state);
    expect(await found('zeppelin')).not.toContain('locked-text.pdf');
  });
});
