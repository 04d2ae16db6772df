import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, finishedJob } from '../../../test/helpers/conversion.js';
import { contentUrl, newContent } from '../../../test/helpers/entries.js';
import { textPdf } from '../../../test/helpers/pdf.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const restDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;

describe('POST C/convert/image → CONTENT_REPRESENTATION', () => {
  it('answers at once with duration and jobId; the job renders every page into representations', async () => {
    const content = await newContent(service, { name: 'three-pages.pdf', bytes: textPdf(3) });
    const started = await convert(service, { contentId: content.id, targetFormat: 'png' });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ _type: 'svc.model.content.service.v1.request.conversion.ConversionResponse', jobId: expect.any(String), duration: expect.any(Number) });
    const status = await finishedJob(service, started.body.jobId);
    expect(status).toMatchObject({ _type: 'svc.model.content.service.v1.request.async.status.AsyncJobResponse', state: 'Done', representationAccessId: expect.any(String) });
    const job = status.serviceRequestJob;
    expect(job).toMatchObject({
      id: started.body.jobId,
      conversionJobId: expect.any(String),
      conversionType: 'IMAGE',
      clientSessionId: expect.stringMatching(/^[0-9a-f]{16}$/),
      clientUsername: 'admin',
      contentIds: [content.id],
      inputFilenames: ['three-pages.pdf'],
      displayFilename: 'three-pages.pdf',
      targetName: 'three-pages.png',
      resultAction: 'CONTENT_REPRESENTATION',
      state: 'Done',
      percentage: 100,
      priority: 0,
      tries: 1,
      revivable: true,
      duration: expect.any(Number),
      partition: 'access.svc.content.default',
      requestTypeShortName: 'ConvertToImageRequest',
      requestTypeSignature: 'POST /v1/convert/image',
      requestSelectiveInformation: expect.stringContaining(content.id),
    });
    for (const field of ['startTimestamp', 'endTimestamp', 'lastStatusUpdate']) expect(job[field]).toMatch(restDate);
    expect(JSON.parse(job.serializedRequest)).toMatchObject({ contentId: content.id, targetFormat: 'png' });
    expect(JSON.parse(job.serializedResult)).toMatchObject({ pages: 3 });
    expect(job.errorMessage).toBeUndefined();

    const listed = await call(contentUrl(service, `/content/${content.id}/representations`));
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ _type: 'svc.model.content.service.v1.request.representation.RepresentationsResponse', count: 3 });
    expect(listed.body.entries.map((e: any) => e.page)).toEqual([1, 2, 3]);
    const first = listed.body.entries[0];
    // 150 DPI: a Letter page is 1275 × 1650 pixels
    expect(first).toMatchObject({ format: 'png', mimeType: 'image/png', status: 'READY', width: 1275, height: 1650, pageCount: 3 });

    const download = await fetch(contentUrl(service, `/representations/${first.id}/download`));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(first.fileSize);
    const stats = await sharp(bytes).stats();
    // text was drawn: the page is not blank white
    expect(stats.channels[0]!.min).toBeLessThan(100);
  });
});
