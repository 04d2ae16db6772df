import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalStates } from '../../src/modules/jobs/index.js';
import { projectRoot } from '../../src/paths.js';
import { convert, finishedJob } from '../helpers/conversion.js';
import { contentUrl, newContent, newFolder } from '../helpers/entries.js';
import { textPdf } from '../helpers/pdf.js';
import { call, json, startTestService, type TestService } from '../helpers/service.js';

// Real-world PDFs (issue 29 item 4): a sample of pdf.js's test suite — broken, fuzzed, encrypted, a
// scan, a valid one — through every conversion path as a client drives it: the whole document to page
// images, a MERGE with a valid PDF, and the text of its upload with OCR on. Each ends in a result or in
// `panic` with a reason code and a message, within a bound, and no call answers a 5xx (call() checks
// each answer against the OpenAPI document). The whole corpus: `npm run bench -- corpus`.
const sample = [
  'issue15590.pdf',
  'poppler-85140-0.pdf',
  'REDHAT-1531897-0.pdf',
  'xref_command_missing.pdf',
  'poppler-937-0-fuzzed.pdf',
  'issue17215.pdf',
  'bitmap-mmr.pdf',
  'three_pages_with_number.pdf',
];
/**
 * Read from the shared corpus (`../shared/corpus`, or CORPUS_DIR as for `npm run bench -- corpus`),
 * never copied into the project (its README asks so); on a machine
 * without it the file is skipped, and says so, as the MongoDB contract tests are without MongoDB.
 */
const folder = path.resolve(process.env.CORPUS_DIR ?? path.join(projectRoot, '../shared/corpus'));
const corpusHere = sample.every((file) => existsSync(path.join(folder, file)));
if (!corpusHere) console.warn(`real-world PDFs skipped: the corpus is not at ${folder} (CORPUS_DIR names another place)`);
const boundMs = 150_000;

let service: TestService;
const contents = new Map<string, string>();
let valid: Record<string, any>;

beforeAll(async () => {
  if (!corpusHere) return;
  service = await startTestService({ OCR_ENABLED: 'true' });
  for (const file of sample) contents.set(file, (await newContent(service, { name: file, bytes: await fs.readFile(path.join(folder, file)) })).id);
  valid = await newContent(service, { name: 'valid.pdf', bytes: textPdf(1, 5) });
});
afterAll(() => service?.stop());

/** Done, or panic with a reason code and a message (never cancelled, never without a reason). */
function endedWell(file: string, job: { state: string; reasonCode?: string; errorMessage?: string }) {
  expect(['Done', 'panic'], file).toContain(job.state);
  if (job.state === 'panic') {
    expect(job.reasonCode, file).toMatch(/^[a-z][A-Za-z]+$/);
    expect(job.errorMessage, file).toBeTruthy();
  }
}

describe.skipIf(!corpusHere)('real-world PDFs through every conversion path', () => {
  it('to page images (every page, CONTENT_REPRESENTATION): each Done with its pages stored, or panic with a reason', async () => {
    const jobs = await Promise.all(
      sample.map(async (file) => {
        const started = await convert(service, { contentId: contents.get(file)! });
        expect(started.status, file).toBe(200);
        return [file, (await finishedJob(service, started.body.jobId, {}, boundMs)).serviceRequestJob] as const;
      }),
    );
    for (const [file, job] of jobs) {
      endedWell(file, job);
      if (job.state !== 'Done') continue;
      const pages = await call(contentUrl(service, `/content/${contents.get(file)}/representations`));
      expect(pages.body.count, file).toBe(JSON.parse(job.serializedResult).pages);
    }
    const byFile = Object.fromEntries(jobs);
    expect(byFile['three_pages_with_number.pdf']).toMatchObject({ state: 'Done', percentage: 100 });
    expect(JSON.parse(byFile['three_pages_with_number.pdf']!.serializedResult).pages).toBe(3);
    expect(byFile['REDHAT-1531897-0.pdf']).toMatchObject({ state: 'panic', reasonCode: 'illegalArguments', errorMessage: expect.stringMatching(/is not a readable PDF/) });
  }, 300_000);

  it('merged with a valid PDF: each Done, or panic with a reason naming the input', async () => {
    const target = await newFolder(service, 'merged');
    const jobs = await Promise.all(
      sample.map(async (file) => {
        const started = await call(
          contentUrl(service, '/convert/merge'),
          json('POST', { contentIds: [contents.get(file), valid.id], resultAction: 'NEW_CONTENT', newContentSpecification: { name: file, parentId: target.id } }),
        );
        expect(started.status, file).toBe(200);
        return [file, (await finishedJob(service, started.body.jobId, {}, boundMs)).serviceRequestJob] as const;
      }),
    );
    for (const [file, job] of jobs) {
      endedWell(file, job);
      if (job.state === 'panic') expect(job.errorMessage, file).toContain(file);
    }
    const byFile = Object.fromEntries(jobs);
    expect(JSON.parse(byFile['three_pages_with_number.pdf']!.serializedResult)).toMatchObject({ pages: 4, pagesPerInput: [3, 1] });
    // a document without a page tree: pdf-lib's TypeError was a conversionFailed "Cannot read properties of undefined (reading 'Pages')"
    expect(byFile['REDHAT-1531897-0.pdf']).toMatchObject({ state: 'panic', reasonCode: 'illegalArguments' });
    // what failed created nothing: the folder holds the results of the jobs Done
    const children = await call(contentUrl(service, `/folder/${target.id}/children`, { limit: 100 }));
    expect(children.body.count).toBe(jobs.filter(([, job]) => job.state === 'Done').length);
  }, 300_000);

  it('their text with OCR on: each upload taken by an extraction job that ends, the content extracted or listed among its failures with a reason', async () => {
    const until = Date.now() + boundMs;
    const states = new Map<string, string>();
    while (states.size < sample.length) {
      expect(Date.now(), `extraction not final for ${sample.filter((file) => !states.has(file)).join(', ')}`).toBeLessThan(until);
      const listed = await call(contentUrl(service, '/jobs', { limit: 1000 }));
      expect(listed.status).toBe(200);
      const extractions = listed.body.entries.filter((job: Record<string, any>) => job.requestTypeShortName === 'ExtractTextRequest');
      for (const file of sample) {
        const job = extractions.find((candidate: Record<string, any>) => candidate.contentIds?.includes(contents.get(file)));
        if (!job || !finalStates.includes(job.state)) continue;
        endedWell(file, job);
        const failure = job.state === 'Done' && (JSON.parse(job.serializedResult).failed ?? []).find((failed: { contentIds: string[] }) => failed.contentIds.includes(contents.get(file)!));
        if (failure) {
          expect(failure.reasonCode, file).toMatch(/^[a-z][A-Za-z]+$/);
          expect(failure.message, file).toBeTruthy();
        }
        states.set(file, job.state === 'panic' || failure ? 'failed' : 'extracted');
      }
      await sleep(250);
    }
    expect(states.get('three_pages_with_number.pdf')).toBe('extracted');
    expect(states.get('bitmap-mmr.pdf')).toBe('extracted');
  }, 300_000);
});
