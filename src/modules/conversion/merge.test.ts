import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishedJob, repositoryWithLimits, type Caller } from '../../../test/helpers/conversion.js';
import { contentUrl, newContent, newFolder, restDatePattern as restDate, sql } from '../../../test/helpers/entries.js';
import { buildPdf, objectsPage, textPdf } from '../../../test/helpers/pdf.js';
import { call, json, startTestService, type TestService } from '../../../test/helpers/service.js';

// MERGE (DESIGN §12): POST C/convert/merge and the GraphQL mutation, the job it runs, its limits and failures.
let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const merge = (body: Record<string, unknown>, caller: Caller = {}) =>
  call(contentUrl(service, '/convert/merge', {}, caller.session, caller.base), json('POST', body));

/** A PDF whose pages have these widths (points): the merged document's page sizes show the order. */
const pdfOfWidths = (...widths: number[]) => buildPdf(widths.map((width) => ({ width, height: 500, ...objectsPage(2) })));
const png = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#3366cc' } }).png().toBuffer();

async function merged(jobId: string, caller: Caller = {}) {
  const job = await finishedJob(service, jobId, caller);
  return { job, record: job.serviceRequestJob as Record<string, any> };
}

async function pageSizesOf(contentId: string): Promise<{ width: number; height: number }[]> {
  const download = await fetch(contentUrl(service, `/content/${contentId}/download`));
  expect(download.status).toBe(200);
  expect(download.headers.get('content-type')).toMatch(/^application\/pdf/);
  const document = await PDFDocument.load(new Uint8Array(await download.arrayBuffer()));
  return document.getPages().map((page) => {
    const { width, height } = page.getSize();
    return { width: Math.round(width), height: Math.round(height) };
  });
}

describe('POST C/convert/merge', () => {
  it('merges PDFs (every page) and images (one A4 page each, turned to their orientation) in the given order into one new content', async () => {
    const folder = await newFolder(service, 'merged');
    const first = await newContent(service, { name: 'first.pdf', bytes: pdfOfWidths(300, 301, 302) });
    const wide = await newContent(service, { name: 'wide.png', bytes: await png(1600, 900), mimeType: 'image/png' });
    const second = await newContent(service, { name: 'second.pdf', bytes: pdfOfWidths(400, 401) });
    const tall = await newContent(service, { name: 'tall.webp', bytes: await sharp(await png(90, 160)).webp().toBuffer(), mimeType: 'image/webp' });
    const contentIds = [first.id, wide.id, second.id, tall.id];
    const started = await merge({ contentIds, resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'bundle', parentId: folder.id, description: 'all four', tags: ['merged'] } });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({ _type: 'svc.model.content.service.v1.request.conversion.ConversionResponse', jobId: expect.any(String), duration: expect.any(Number) });
    const { job, record } = await merged(started.body.jobId);
    expect(job.state).toBe('Done');
    expect(record).toMatchObject({
      conversionType: 'MERGE',
      contentIds,
      inputFilenames: ['first.pdf', 'wide.png', 'second.pdf', 'tall.webp'],
      displayFilename: 'first.pdf',
      targetName: 'bundle.pdf',
      resultAction: 'NEW_CONTENT',
      percentage: 100,
      tries: 1,
      requestTypeShortName: 'MergeRequest',
      requestTypeSignature: 'POST /v1/convert/merge',
    });
    expect(record.endTimestamp).toMatch(restDate);
    const result = JSON.parse(record.serializedResult);
    expect(result).toMatchObject({ pages: 7, pagesPerInput: [3, 1, 2, 1], contentId: expect.any(String) });
    expect(JSON.parse(record.serializedLowlevelRequest)).toMatchObject({ engine: 'pdf-lib', inputs: [{ kind: 'pdf' }, { kind: 'image' }, { kind: 'pdf' }, { kind: 'image' }] });
    const content = await call(contentUrl(service, `/content/${result.contentId}`));
    expect(content.body).toMatchObject({ name: 'bundle.pdf', parent: { id: folder.id }, properties: { description: 'all four' }, tags: ['merged'], resource: { mimeType: 'application/pdf' } });
    expect(await pageSizesOf(result.contentId)).toEqual([
      { width: 300, height: 500 },
      { width: 301, height: 500 },
      { width: 302, height: 500 },
      { width: 842, height: 595 },
      { width: 400, height: 500 },
      { width: 401, height: 500 },
      { width: 595, height: 842 },
    ]);
  });

  it('names the result <first input>-merged.pdf without a name, in the root without a parentId; the same content may come twice', async () => {
    const only = await newContent(service, { name: 'twice.pdf', bytes: textPdf(2) });
    const { record } = await merged((await merge({ contentIds: [only.id, only.id], resultAction: 'NEW_CONTENT' })).body.jobId);
    expect(record.state).toBe('Done');
    const { contentId, pages } = JSON.parse(record.serializedResult);
    expect(pages).toBe(4);
    expect(await sql(service, 'select parent_id from entry where id = ?', [contentId])).toEqual([{ parent_id: null }]);
    // no date or producer is written: the same inputs make the same bytes, so a retried job knows its own result (convert-job.ts createResultContent)
    const again = await merged((await merge({ contentIds: [only.id, only.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'again' } })).body.jobId);
    const md5Of = async (id: string) => (await call(contentUrl(service, `/content/${id}`))).body.resource.md5;
    expect(await md5Of(JSON.parse(again.record.serializedResult).contentId)).toBe(await md5Of(contentId));
    expect((await call(contentUrl(service, `/content/${contentId}`))).body).toMatchObject({ name: 'twice-merged.pdf' });
  });

  it('is started through the GraphQL gateway as mergeToPdf', async () => {
    const a = await newContent(service, { name: 'gql-a.pdf', bytes: textPdf(1) });
    const b = await newContent(service, { name: 'gql-b.png', bytes: await png(40, 40), mimeType: 'image/png' });
    const answer = await service.graphql<{ mergeToPdf: { jobId: string } }>(
      'mutation($input: MergeConversionInput!) { mergeToPdf(repository: "default", input: $input) { jobId duration } }',
      { input: { contentIds: [a.id, b.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'gql.pdf' } } },
    );
    expect(answer.errors).toBeUndefined();
    const { record } = await merged(answer.data!.mergeToPdf.jobId);
    expect(record).toMatchObject({ state: 'Done', conversionType: 'MERGE', targetName: 'gql.pdf' });
  });
});

describe('a 200-page merge of 20 inputs', () => {
  it('runs within a merge process bounded to 192 MB (the job fails over its bound: its memory is bounded)', async () => {
    const small = await startTestService({ CONV_RENDER_MEMORY_MB: '192' });
    try {
      const ids: string[] = [];
      for (let input = 1; input <= 20; input++) {
        ids.push((await newContent(small, { name: `part-${input}.pdf`, bytes: textPdf(10), session: small.adminSession, base: small.contentBase })).id);
      }
      const started = await call(contentUrl(small, '/convert/merge', {}, small.adminSession, small.contentBase), json('POST', { contentIds: ids, resultAction: 'NEW_CONTENT' }));
      const job = await finishedJob(small, started.body.jobId, { session: small.adminSession, base: small.contentBase });
      expect(job.state, job.serviceRequestJob.errorMessage).toBe('Done');
      expect(JSON.parse(job.serviceRequestJob.serializedResult)).toMatchObject({ pages: 200, pagesPerInput: Array(20).fill(10) });
    } finally {
      await small.stop();
    }
  });
});

describe('POST C/convert/merge: refusals', () => {
  it('refuses a body without contents, with an empty id, another result action, or no JSON (400 naming the field)', async () => {
    const one = await newContent(service, { name: 'refused.pdf', bytes: textPdf(1) });
    for (const body of [
      { contentIds: [], resultAction: 'NEW_CONTENT' },
      { contentIds: [''], resultAction: 'NEW_CONTENT' },
      { contentIds: [one.id], resultAction: 'CONTENT_REPRESENTATION' },
      { resultAction: 'NEW_CONTENT' },
      { contentIds: one.id, resultAction: 'NEW_CONTENT', newContentSpecification: 'x' },
    ]) {
      const answer = await merge(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.reasonCode).toBe('illegalArguments');
    }
    const notJson = await call(contentUrl(service, '/convert/merge'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('answers 404 for an unknown content, a folder, or a content the caller may not read, and starts nothing', async () => {
    const mine = await newContent(service, { name: 'admin-only.pdf', bytes: textPdf(1) });
    const acl = await call(contentUrl(service, `/content/${mine.id}/acl`), json('PUT', { inherit: false, entries: [] }));
    expect(acl.status).toBe(200);
    const user = await service.createUserSession('merge-reader');
    const before = await sql<{ n: string }>(service, `select count(*) as n from service_job where conversion_type = 'MERGE'`);
    const folder = await newFolder(service, 'not-a-content');
    for (const [ids, session] of [
      [['no-such-id'], undefined],
      [[folder.id], undefined],
      [[mine.id], user],
    ] as const) {
      const answer = await merge({ contentIds: ids, resultAction: 'NEW_CONTENT' }, { session });
      expect(answer.status, JSON.stringify(ids)).toBe(404);
    }
    expect(await sql(service, `select count(*) as n from service_job where conversion_type = 'MERGE'`)).toEqual(before);
  });
});

describe('the merge job: limits and unreadable inputs', () => {
  it('checks the number of files, each size and the total size before any work, with the spec messages', async () => {
    const pdf = textPdf(1);
    const tooMany = await repositoryWithLimits(service, { maxNumberOfInputFiles: 2 });
    const ids = [];
    for (const name of ['m1.pdf', 'm2.pdf', 'm3.pdf']) ids.push((await newContent(service, { name, bytes: pdf, base: tooMany })).id);
    const many = await merged((await merge({ contentIds: ids, resultAction: 'NEW_CONTENT' }, { base: tooMany })).body.jobId, { base: tooMany });
    expect(many.record).toMatchObject({ state: 'panic', reasonCode: 'illegalArguments', errorMessage: 'more input files attached (3) than allowed per job (2) or in general (100): m1.pdf, m2.pdf, m3.pdf' });

    const total = await repositoryWithLimits(service, { maxTotalInputFileSize: pdf.length + 10 });
    const both = [];
    for (const name of ['t1.pdf', 't2.pdf']) both.push((await newContent(service, { name, bytes: pdf, base: total })).id);
    const over = await merged((await merge({ contentIds: both, resultAction: 'NEW_CONTENT' }, { base: total })).body.jobId, { base: total });
    expect(over.record.errorMessage).toBe(`the size of all input resources t1.pdf, t2.pdf (${2 * pdf.length}) exceeds the job-based total maximum ${pdf.length + 10} or the total maximum 2147483648`);
    expect(over.record.percentage).toBe(0);
  });

  it('fails on an encrypted, a broken or a non-PDF non-image input, naming it, and creates nothing', async () => {
    const good = await newContent(service, { name: 'good.pdf', bytes: textPdf(1) });
    const cases = [
      { name: 'secret.pdf', bytes: buildPdf([objectsPage(3)], { encrypted: true }), reason: 'illegalArguments', message: /^input resource secret\.pdf is encrypted and cannot be opened without its password$/ },
      { name: 'cut.pdf', bytes: textPdf(3).subarray(0, 200), reason: 'illegalArguments', message: /^input resource cut\.pdf is not a readable PDF/ },
      { name: 'broken.png', bytes: Buffer.from('\x89PNG\r\n\x1a\nnot really'), mimeType: 'image/png', reason: 'illegalArguments', message: /^input resource broken\.png is not a readable image/ },
      { name: 'notes.txt', bytes: 'plain text', mimeType: 'text/plain', reason: 'unsupportedMediaType', message: /^input resource notes\.txt \(text\/plain\) cannot be converted to a PDF/ },
    ];
    for (const { name, bytes, mimeType, reason, message } of cases) {
      const bad = await newContent(service, { name, bytes, mimeType });
      const target = `failed-${name}.pdf`;
      const { record } = await merged((await merge({ contentIds: [good.id, bad.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: target } })).body.jobId);
      expect(record.state, name).toBe('panic');
      expect(record.reasonCode, name).toBe(reason);
      expect(record.errorMessage, name).toMatch(message);
      expect(await sql(service, 'select id from entry where name = ?', [target])).toEqual([]);
    }
  });

  it('fails with a conflict when the result name is taken in its folder', async () => {
    const taken = await newContent(service, { name: 'taken.pdf', bytes: textPdf(1) });
    const { record } = await merged((await merge({ contentIds: [taken.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'taken.pdf' } })).body.jobId);
    expect(record).toMatchObject({ state: 'panic', reasonCode: 'conflict' });
  });
});
