import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../paths.js';
import { changeLimits, convert, convertBytes, finishedJob, repositoryWithLimits } from '../../../test/helpers/conversion.js';
import { contentUrl, newContent } from '../../../test/helpers/entries.js';
import { buildPdf, objectsPage, textPdf } from '../../../test/helpers/pdf.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;

// small conversion limits, so that documents generated here break them
const conversionLimits = {
  CONV_MAX_INPUT_FILE_SIZE: '400000',
  CONV_MAX_TOTAL_INPUT_FILE_SIZE: '500000',
  CONV_MAX_NUMBER_OF_INPUT_FILES: '3',
  // the settings-file names of the spec, as aliases
  CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_OBJECTS_PER_PAGE: '100',
  CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_OBJECTS: '250',
  CONV_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES: '10',
  CONV_PDF_DPI: '36',
  // one job at a time: the queue's order is observable
  JOB_CONCURRENCY: '1',
};

beforeAll(async () => {
  service = await startTestService(conversionLimits);
});
afterAll(() => service?.stop());

const failed = (job: Record<string, any>) => {
  expect(job.state).toBe('panic');
  expect(job.serviceRequestJob).toMatchObject({ state: 'panic', reasonCode: 'illegalArguments', revivable: false });
  expect(job.serviceRequestJob.stackTrace).toContain('LimitExceeded');
  return job.serviceRequestJob.errorMessage as string;
};

describe('input file limits: repository limits, then conversion limits (spec Errors 4)', () => {
  it('an empty file: its size is zero (the call that started the job had succeeded)', async () => {
    const { job } = await convertBytes(service, Buffer.alloc(0), 'empty.pdf');
    expect(failed(job)).toBe('the size of input resource empty.pdf (0) is either unknown, zero, above the job-based maximum 400000 or above the maximum 400000');
  });

  it('a file above the repository maximum: single file too big', async () => {
    const base = await repositoryWithLimits(service, { maxInputFileSize: 1000 });
    const pdf = textPdf(2);
    const { job } = await convertBytes(service, pdf, 'big.pdf', {}, { base });
    expect(failed(job)).toBe(`the size of input resource big.pdf (${pdf.length}) is either unknown, zero, above the job-based maximum 1000 or above the maximum 400000`);
  });

  it('a repository limit above the conversion limit counts as the conversion limit', async () => {
    const base = await repositoryWithLimits(service, { maxInputFileSize: 10_000_000 });
    const pdf = Buffer.concat([textPdf(1), Buffer.alloc(420_000, 0x20)]);
    const { job } = await convertBytes(service, pdf, 'huge.pdf', {}, { base });
    expect(failed(job)).toBe(`the size of input resource huge.pdf (${pdf.length}) is either unknown, zero, above the job-based maximum 400000 or above the maximum 400000`);
  });

  it('all inputs above the repository total maximum: total size too big', async () => {
    const base = await repositoryWithLimits(service, { maxTotalInputFileSize: 200 });
    const pdf = textPdf(2);
    const { job } = await convertBytes(service, pdf, 'total.pdf', {}, { base });
    expect(failed(job)).toBe(`the size of all input resources total.pdf (${pdf.length}) exceeds the job-based total maximum 200 or the total maximum 500000`);
  });

  it('more input files than the repository allows: too many files, with the file list', async () => {
    const base = await repositoryWithLimits(service, { maxNumberOfInputFiles: 0 });
    const { job } = await convertBytes(service, textPdf(1), 'one.pdf', {}, { base });
    expect(failed(job)).toBe('more input files attached (1) than allowed per job (0) or in general (3): one.pdf');
  });
});

describe("a failed job's stackTrace", () => {
  it('names the service\'s files relative to the project, not where it is installed', async () => {
    const { job } = await convertBytes(service, textPdf(11, 1), 'trace.pdf');
    const trace: string = job.serviceRequestJob.stackTrace;
    expect(trace).toMatch(/^LimitExceeded: more pages \(11\) than allowed \(10\)/);
    // the frames of the limit and of the conversion job that checked it (compiled files; their sources under vitest's source maps)
    expect(trace).toMatch(/\((dist\/)?src\/modules\/conversion\/limits\.[jt]s:\d+:\d+\)/);
    expect(trace).toMatch(/\((dist\/)?src\/modules\/conversion\/convert-job\.[jt]s:\d+:\d+\)/);
    expect(trace).not.toContain('file://');
    expect(trace).not.toContain(projectRoot);
    expect(trace).not.toContain(realpathSync(projectRoot));
  });
});

describe('PDF objects and pages against the repository Conversion limit with strategy ERROR (spec Errors 5)', () => {
  it('more objects on a page than the repository share allows (MEDIUM: 50 of 100)', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'MEDIUM', conversionStrategy: 'ERROR' });
    const { job } = await convertBytes(service, buildPdf([objectsPage(10), objectsPage(60)]), 'dense.pdf', {}, { base });
    expect(failed(job)).toBe('more objects (60) on page 2 than allowed (50) on input resource dense.pdf');
  });

  it('more objects in total than the repository share allows (MEDIUM: 125 of 250)', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'MEDIUM', conversionStrategy: 'ERROR' });
    const { job } = await convertBytes(service, buildPdf([objectsPage(45), objectsPage(45), objectsPage(45)]), 'many.pdf', {}, { base });
    expect(failed(job)).toBe('more objects in total than the repository maximum 125 for many.pdf with 135 objects, with a hard limit 250');
  });

  it('more pages than the repository share allows (HIGH: 8 of 10)', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'HIGH', conversionStrategy: 'ERROR' });
    const { job } = await convertBytes(service, textPdf(9, 1), 'long.pdf', {}, { base });
    expect(failed(job)).toBe('more pages (9) than allowed (8) on input resource long.pdf');
  });

  it('without a strategy set, a document over the repository limit is rejected (ERROR is the default)', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'LOW' });
    const { job } = await convertBytes(service, buildPdf([objectsPage(30)]), 'default.pdf', {}, { base });
    expect(failed(job)).toBe('more objects (30) on page 1 than allowed (20) on input resource default.pdf');
  });
});

describe('over the conversion limit the job fails whatever the strategy', () => {
  it('names the repository maximum of its Conversion limit, not the hard one, when the hard total is broken', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'LOW', conversionStrategy: 'ERROR' });
    const total = await convertBytes(service, buildPdf([objectsPage(90), objectsPage(90), objectsPage(90)]), 'total.pdf', {}, { base });
    expect(failed(total.job)).toBe('more objects in total than the repository maximum 50 for total.pdf with 270 objects, with a hard limit 250');
  });


  for (const strategy of ['REPLACE', 'LOW_PRIORITY', 'ERROR']) {
    it(`${strategy}: objects per page, objects in total, pages`, async () => {
      const base = await repositoryWithLimits(service, { conversionLimit: 'UNLIMITED', conversionStrategy: strategy });
      const perPage = await convertBytes(service, buildPdf([objectsPage(101)]), 'page.pdf', {}, { base });
      expect(failed(perPage.job)).toBe('more objects (101) on page 1 than allowed (100) on input resource page.pdf');
      const total = await convertBytes(service, buildPdf([objectsPage(90), objectsPage(90), objectsPage(90)]), 'total.pdf', {}, { base });
      expect(failed(total.job)).toBe('more objects in total than the repository maximum 250 for total.pdf with 270 objects, with a hard limit 250');
      const pages = await convertBytes(service, textPdf(11, 1), 'pages.pdf', {}, { base });
      expect(failed(pages.job)).toBe('more pages (11) than allowed (10) on input resource pages.pdf');
    });
  }
});

describe('strategy REPLACE: pages over the repository limit become placeholder pages', () => {
  it('renders the other pages and a placeholder in place of the dense page', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'MEDIUM', conversionStrategy: 'REPLACE' });
    const { content, job } = await convertBytes(service, buildPdf([objectsPage(10), objectsPage(70), objectsPage(10)]), 'replace.pdf', {}, { base });
    expect(job.state).toBe('Done');
    expect(JSON.parse(job.serviceRequestJob.serializedResult)).toMatchObject({ pages: 3, placeholders: [2] });
    const listed = await call(contentUrl(service, `/content/${content.id}/representations`, {}, undefined, base));
    expect(listed.body.entries.map((e: any) => [e.page, e.status])).toEqual([
      [1, 'READY'],
      [2, 'PLACEHOLDER'],
      [3, 'READY'],
    ]);
  });
});

describe('a conversion of pages stored before checks the limits again and reuses only real renders', () => {
  it('placeholders of REPLACE are rendered for real once the limits allow it; ERROR rejects a document whose pages are all stored', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'MEDIUM', conversionStrategy: 'REPLACE' });
    const content = await newContent(service, { name: 'relaxed.pdf', bytes: buildPdf([objectsPage(10), objectsPage(70), objectsPage(10)]), base });
    const run = async () => (await finishedJob(service, (await convert(service, { contentId: content.id }, { base })).body.jobId, { base })).serviceRequestJob;
    const pagesNow = async () => (await call(contentUrl(service, `/content/${content.id}/representations`, {}, undefined, base))).body.entries;
    const replaced = await run();
    expect(JSON.parse(replaced.serializedResult)).toMatchObject({ pages: 3, placeholders: [2] });

    await changeLimits(service, base, { conversionLimit: 'UNLIMITED', conversionStrategy: 'ERROR' });
    const relaxed = await run();
    expect(relaxed.state).toBe('Done');
    const relaxedResult = JSON.parse(relaxed.serializedResult);
    expect(relaxedResult).toMatchObject({ pages: 3, placeholders: [] });
    expect(relaxedResult.reused).toBeUndefined();
    // page 2 is rendered by this job; pages 1 and 3 were real renders and are kept
    expect((await pagesNow()).map((e: any) => [e.page, e.status, e.jobId])).toEqual([
      [1, 'READY', replaced.id],
      [2, 'READY', relaxed.id],
      [3, 'READY', replaced.id],
    ]);
    const again = await run();
    expect(JSON.parse(again.serializedResult)).toMatchObject({ pages: 3, placeholders: [], reused: true });

    await changeLimits(service, base, { conversionLimit: 'LOW', conversionStrategy: 'ERROR' });
    expect(failed(await finishedJob(service, (await convert(service, { contentId: content.id }, { base })).body.jobId, { base }))).toBe(
      'more pages (3) than allowed (2) on input resource relaxed.pdf',
    );
  });
});

describe('strategy LOW_PRIORITY: the job goes to the back of the queue with a lower priority', () => {
  it('jobs started after it finish first; it is then rendered whole', async () => {
    const base = await repositoryWithLimits(service, { conversionLimit: 'MEDIUM', conversionStrategy: 'LOW_PRIORITY' });
    const dense = await newContent(service, { name: 'dense.pdf', bytes: buildPdf([objectsPage(70), objectsPage(10)]), base });
    const small = await Promise.all([1, 2].map((n) => newContent(service, { name: `small-${n}.pdf`, bytes: textPdf(1), base })));
    const denseJob = (await convert(service, { contentId: dense.id }, { base })).body.jobId as string;
    const smallJobs: string[] = [];
    for (const content of small) smallJobs.push((await convert(service, { contentId: content.id }, { base })).body.jobId);
    const lowered = (await finishedJob(service, denseJob, { base })).serviceRequestJob;
    const others = await Promise.all(smallJobs.map(async (id) => (await finishedJob(service, id, { base })).serviceRequestJob));
    expect(lowered).toMatchObject({ state: 'Done', priority: -20 });
    expect(JSON.parse(lowered.serializedLowlevelRequest)).toMatchObject({
      lowered: true,
      reason: 'more objects (70) on page 1 than allowed (50) on input resource dense.pdf',
      engine: 'pdfjs-dist',
      targetFormat: 'png',
    });
    expect(JSON.parse(lowered.serializedResult)).toMatchObject({ pages: 2, placeholders: [] });
    for (const other of others) {
      expect(other.state).toBe('Done');
      expect(Date.parse(other.endTimestamp.replace('+0000', 'Z'))).toBeLessThan(Date.parse(lowered.endTimestamp.replace('+0000', 'Z')));
    }
  });
});
