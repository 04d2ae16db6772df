import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convert, convertBytes, finishedJob, jobStatus } from '../../../test/helpers/conversion.js';
import { cachedFiles, contentUrl, newContent, newFolder, restDatePattern as restDate, sql, storedFiles } from '../../../test/helpers/entries.js';
import { buildPdf, textPdf } from '../../../test/helpers/pdf.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());


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
    // what the job asked of its engine, without the storage's paths
    expect(JSON.parse(job.serializedLowlevelRequest)).toEqual({
      engine: 'pdfjs-dist',
      inputResourceId: content.resource.id,
      inputMimeType: 'application/pdf',
      inputKind: 'pdf',
      targetFormat: 'png',
      dpi: 150,
      maxPixels: expect.any(Number),
      // what the default 1024-MB render bound draws of a page at most: 32 bytes a pixel
      maxPagePixels: (1024 * 1024 * 1024) / 32,
    });
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
    // the page names where its bytes are, as a resource does
    expect(first.downloadUrl).toBe(`/api/v1/access.svc.content.default/v1/representations/${encodeURIComponent(first.id)}/download`);
    expect(download.headers.get('content-type')).toBe('image/png');
    // DESIGN §9, as every download of stored bytes
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(download.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(download.headers.get('cache-control')).toBe('private');
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).toBe(first.fileSize);
    const stats = await sharp(bytes).stats();
    // text was drawn: the page is not blank white
    expect(stats.channels[0]!.min).toBeLessThan(100);
  });
});

describe('a second conversion of the same version to the same format', () => {
  it('reuses the representations instead of rendering again', async () => {
    const { content, job } = await convertBytes(service, textPdf(2), 'twice.pdf');
    expect(job.state).toBe('Done');
    const before = (await call(contentUrl(service, `/content/${content.id}/representations`))).body.entries;
    const again = await finishedJob(service, (await convert(service, { contentId: content.id })).body.jobId);
    expect(again.state).toBe('Done');
    expect(JSON.parse(again.serviceRequestJob.serializedResult)).toEqual({ pages: 2, placeholders: [], representationIds: before.map((r: any) => r.id), reused: true });
    const after = (await call(contentUrl(service, `/content/${content.id}/representations`))).body.entries;
    expect(after).toEqual(before);
    // another format is rendered anew; a JSON body's enum value is read in either case, as a parameter's is
    const jpeg = await finishedJob(service, (await convert(service, { contentId: content.id, targetFormat: 'JPEG' })).body.jobId);
    expect(JSON.parse(jpeg.serviceRequestJob.serializedResult).reused).toBeUndefined();
    expect((await call(contentUrl(service, `/content/${content.id}/representations`))).body.count).toBe(4);
    expect((await convert(service, { contentId: content.id, targetFormat: 'gif' })).body).toMatchObject({ status: 400, message: expect.stringMatching(/targetFormat must be one of/) });
  });
});

describe('page images go with their content', () => {
  it('deleting a content for good, or the folder that holds it, removes its page images from the cache store', async () => {
    const folder = await newFolder(service, 'to-purge');
    const pageImagesOf = async (name: string) => {
      const content = await newContent(service, { name, parentId: folder.id, bytes: textPdf(2) });
      const started = await convert(service, { contentId: content.id, targetFormat: 'png' });
      expect((await finishedJob(service, started.body.jobId)).state).toBe('Done');
      const pages = (await call(contentUrl(service, `/content/${content.id}/representations`))).body.entries as { storagePath?: string; id: string }[];
      expect(pages).toHaveLength(2);
      return { content, files: (await cachedFiles(service)).filter((file) => pages.some((page) => file.includes(page.id))) };
    };
    const purged = await pageImagesOf('purged.pdf');
    const inFolder = await pageImagesOf('in-folder.pdf');
    expect(purged.files).toHaveLength(2);
    expect(inFolder.files).toHaveLength(2);

    // deactivating keeps them (the content can be restored); purging removes them
    expect((await call(contentUrl(service, `/content/${purged.content.id}`), { method: 'DELETE' })).status).toBe(204);
    expect(await cachedFiles(service)).toEqual(expect.arrayContaining(purged.files));
    expect((await call(contentUrl(service, `/content/${purged.content.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    expect(await cachedFiles(service)).not.toEqual(expect.arrayContaining([purged.files[0]]));
    expect((await cachedFiles(service)).filter((file) => purged.files.includes(file))).toEqual([]);

    expect((await call(contentUrl(service, `/folder/${folder.id}`, { recursive: 'true' }), { method: 'DELETE' })).status).toBe(204);
    expect((await cachedFiles(service)).filter((file) => inFolder.files.includes(file))).toEqual([]);
  });

  it("a working copy's page images go with it, whether the check-out is cancelled or the working copy deleted; the version keeps its own", async () => {
    const content = await newContent(service, { name: 'checked-out.pdf', bytes: textPdf(1) });
    const pageImagesOf = async (id: string) => {
      expect((await finishedJob(service, (await convert(service, { contentId: id, targetFormat: 'png' })).body.jobId)).state).toBe('Done');
      const pages = (await call(contentUrl(service, `/content/${id}/representations`))).body.entries as { id: string }[];
      return (await cachedFiles(service)).filter((file) => pages.some((page) => file.includes(page.id)));
    };
    const versionImages = await pageImagesOf(content.id);
    expect(versionImages).toHaveLength(1);
    for (const discard of [
      (copyId: string) => call(contentUrl(service, `/content/${copyId}/cancel-check-out`), { method: 'POST' }),
      (copyId: string) => call(contentUrl(service, `/content/${copyId}`), { method: 'DELETE' }),
    ]) {
      const copy = (await call(contentUrl(service, `/content/${content.id}/check-out`), { method: 'POST' })).body;
      const copyImages = await pageImagesOf(copy.id);
      expect(copyImages).toHaveLength(1);
      expect((await discard(copy.id)).status).toBe(204);
      const left = await cachedFiles(service);
      expect(left.filter((file) => copyImages.includes(file))).toEqual([]);
      expect(left).toEqual(expect.arrayContaining(versionImages));
    }
  });
});

describe("a deactivated content's page images", () => {
  it('are served as its bytes are: to its owner and administrators asking with includeInactive=true, to no one else', async () => {
    const owner = await service.createUserSession('dora');
    const other = await service.createUserSession('eve');
    const content = await newContent(service, { name: 'deactivated.pdf', bytes: textPdf(1), session: owner });
    expect((await finishedJob(service, (await convert(service, { contentId: content.id }, { session: owner })).body.jobId, { session: owner })).state).toBe('Done');
    const list = (session: string, query: Record<string, string> = {}) => call(contentUrl(service, `/content/${content.id}/representations`, query, session));
    const [page] = (await list(other)).body.entries;
    const download = (session: string, query: Record<string, string> = {}) => fetch(contentUrl(service, `/representations/${page.id}/download`, query, session));
    expect((await download(other)).status).toBe(200);

    expect((await call(contentUrl(service, `/content/${content.id}`, {}, owner), { method: 'DELETE' })).status).toBe(204);
    const asked = { includeInactive: 'true' };
    for (const query of [{}, asked]) {
      const listed = await list(other, query);
      expect(listed.status).toBe(404);
      expect(listed.body.message).toContain('is deactivated');
      expect((await download(other, query)).status).toBe(404);
    }
    for (const session of [owner, service.adminSession]) {
      expect((await list(session)).status).toBe(404);
      expect((await download(session)).status).toBe(404);
      expect((await list(session, asked)).body.count).toBe(1);
      expect((await download(session, asked)).status).toBe(200);
    }
  });
});

describe('a content deleted while its conversion runs', () => {
  const deletedDuringConversion = async (content: Record<string, any>, jobId: string) => {
    const job = await finishedJob(service, jobId);
    expect(job.state).toBe('panic');
    expect(job.serviceRequestJob).toMatchObject({ reasonCode: 'notFound', errorMessage: `content '${content.id}' was deleted during the conversion` });
    // no page file of it is left in the cache store, also not the page being stored when it went
    expect((await cachedFiles(service)).filter((file) => file.includes(content.id))).toEqual([]);
  };

  it('purged, or its folder deleted, while pages are being stored: the job fails with notFound saying so and leaves no page file', async () => {
    const removals = [
      (content: Record<string, any>) => call(contentUrl(service, `/content/${content.id}`, { permanent: 'true' }), { method: 'DELETE' }),
      (_: Record<string, any>, folder: Record<string, any>) => call(contentUrl(service, `/folder/${folder.id}`, { recursive: 'true' }), { method: 'DELETE' }),
    ];
    for (const [index, remove] of removals.entries()) {
      const folder = await newFolder(service, `deleted-mid-run-${index}`);
      const content = await newContent(service, { name: 'long.pdf', parentId: folder.id, bytes: textPdf(60) });
      const jobId = (await convert(service, { contentId: content.id })).body.jobId;
      while ((await jobStatus(service, jobId)).body.serviceRequestJob.percentage < 15) await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await remove(content, folder)).status).toBe(204);
      await deletedDuringConversion(content, jobId);
    }
  });

  it('purged right after the job was submitted: the same failure', async () => {
    const content = await newContent(service, { name: 'purged-at-once.pdf', bytes: textPdf(3) });
    const jobId = (await convert(service, { contentId: content.id })).body.jobId;
    expect((await call(contentUrl(service, `/content/${content.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    await deletedDuringConversion(content, jobId);
  });
});

describe('page images of a checked-in version', () => {
  it("are dropped when the check-in brings new bytes (they showed the working copy's old ones); a new conversion renders the new bytes", async () => {
    const content = await newContent(service, { name: 'renewed.pdf', bytes: textPdf(1) });
    const copy = (await call(contentUrl(service, `/content/${content.id}/check-out`), { method: 'POST' })).body;
    expect((await finishedJob(service, (await convert(service, { contentId: copy.id, targetFormat: 'png' })).body.jobId)).state).toBe('Done');
    const before = await cachedFiles(service);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(textPdf(2))]), 'renewed.pdf');
    const checkedIn = await call(contentUrl(service, `/content/${copy.id}/check-in`), { method: 'POST', body: form });
    expect(checkedIn).toMatchObject({ status: 200, body: { id: copy.id, version: '2.0' } });
    expect((await call(contentUrl(service, `/content/${copy.id}/representations`))).body.count).toBe(0);
    expect((await cachedFiles(service)).filter((file) => file.includes(copy.id))).toEqual([]);
    expect(before.filter((file) => file.includes(copy.id))).toHaveLength(1);
    const again = await finishedJob(service, (await convert(service, { contentId: copy.id, targetFormat: 'png' })).body.jobId);
    expect(again.state).toBe('Done');
    expect(JSON.parse(again.serviceRequestJob.serializedResult)).toMatchObject({ pages: 2 });
    expect(JSON.parse(again.serviceRequestJob.serializedResult).reused).toBeUndefined();
  });
});

describe('NEW_CONTENT', () => {
  it('creates one content per page named <name>-<page>.<ext> in the folder, with the specification’s properties', async () => {
    const folder = await newFolder(service, 'scans');
    const { job } = await convertBytes(service, textPdf(2), 'letter.pdf', {
      resultAction: 'NEW_CONTENT',
      targetFormat: 'webp',
      newContentSpecification: { name: 'scan', description: 'two pages', parentId: folder.id, tags: ['converted'] },
    });
    expect(job.state).toBe('Done');
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`));
    expect(children.body.entries.map((e: any) => e.name).sort()).toEqual(['scan-1.webp', 'scan-2.webp']);
    for (const entry of children.body.entries) {
      expect(entry).toMatchObject({ entryType: 'CONTENT', version: '1.0', tags: ['converted'], properties: { description: 'two pages' } });
      expect(entry.resource.mimeType).toBe('image/webp');
      const bytes = Buffer.from(await (await fetch(contentUrl(service, `/content/${entry.id}/download`))).arrayBuffer());
      expect((await sharp(bytes).metadata()).format).toBe('webp');
    }
    expect(Object.keys(JSON.parse(job.serviceRequestJob.serializedResult).contentIds)).toEqual(['1', '2']);
  });

  it('one page: <name>.<ext>; without a name the source’s name is used', async () => {
    const folder = await newFolder(service, 'single');
    const { job } = await convertBytes(service, textPdf(1), 'memo.pdf', { resultAction: 'NEW_CONTENT', targetFormat: 'tiff', newContentSpecification: { parentId: folder.id } });
    expect(job.state).toBe('Done');
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`));
    expect(children.body.entries.map((e: any) => [e.name, e.resource.mimeType])).toEqual([['memo.tiff', 'image/tiff']]);
  });

  it('a second job asking for the same new content name ends in panic on the name clash; it does not take the first job’s content', async () => {
    const folder = await newFolder(service, 'twice');
    const content = await newContent(service, { name: 'twice.pdf', parentId: folder.id, bytes: textPdf(1) });
    const request = { contentId: content.id, resultAction: 'NEW_CONTENT', newContentSpecification: { name: 'same.png', parentId: folder.id } };
    const first = await finishedJob(service, (await convert(service, request)).body.jobId);
    expect(first.state).toBe('Done');
    const second = await finishedJob(service, (await convert(service, request)).body.jobId);
    expect(second.state).toBe('panic');
    expect(second.serviceRequestJob).toMatchObject({ reasonCode: 'conflict', errorMessage: expect.stringContaining("an active entry named 'same.png' exists") });
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`));
    const made = Object.values(JSON.parse(first.serviceRequestJob.serializedResult).contentIds);
    expect(children.body.entries.filter((e: any) => e.name === 'same.png').map((e: any) => e.id)).toEqual(made);
  });

  it('a name taken in the folder by any page fails the job before a page is created, so that a retry after removing it succeeds', async () => {
    const folder = await newFolder(service, 'clash-at-page-2');
    const blocker = await newContent(service, { name: 'doc-2.png', parentId: folder.id, bytes: Buffer.from('taken') });
    const content = await newContent(service, { name: 'doc.pdf', bytes: textPdf(3) });
    const request = { contentId: content.id, resultAction: 'NEW_CONTENT', newContentSpecification: { parentId: folder.id } };
    const clashed = await finishedJob(service, (await convert(service, request)).body.jobId);
    expect(clashed.serviceRequestJob).toMatchObject({ state: 'panic', reasonCode: 'conflict', errorMessage: "an active entry named 'doc-2.png' exists in that folder" });
    const names = async () => (await call(contentUrl(service, `/folder/${folder.id}/children`))).body.entries.map((e: any) => e.name).sort();
    expect(await names()).toEqual(['doc-2.png']);
    expect((await call(contentUrl(service, `/content/${blocker.id}`), { method: 'DELETE' })).status).toBe(204);
    expect((await finishedJob(service, (await convert(service, request)).body.jobId)).state).toBe('Done');
    expect(await names()).toEqual(['doc-1.png', 'doc-2.png', 'doc-3.png']);
  });

  it('a page the folder refuses (a denied type) fails the job and leaves no staged bytes behind', async () => {
    const folder = await newFolder(service, 'no-scans');
    expect((await service.graphql('mutation { createContentType(input: { name: "scan" }) { name } }')).errors).toBeUndefined();
    const policy = await service.graphql<{ createTypeRestrictionPolicy: { id: string } }>(
      'mutation { createTypeRestrictionPolicy(input: { name: "no-scans-here", deniedTypeNames: ["scan"] }) { id } }',
    );
    expect(policy.errors).toBeUndefined();
    const assigned = await service.graphql(
      'mutation($p: ID!, $f: ID!) { assignPolicy(policyId: $p, repositoryId: "svc.repository.default", folderId: $f) }',
      { p: policy.data!.createTypeRestrictionPolicy.id, f: folder.id },
    );
    expect(assigned.errors).toBeUndefined();
    const content = await newContent(service, { name: 'refused-scan.pdf', bytes: textPdf(1) });
    const before = await storedFiles(service);
    const pending = async () => (await sql<{ n: string }>(service, `select count(*) as n from resource where state = 'pending'`))[0]!.n;
    const pendingBefore = await pending();
    const job = await finishedJob(service, (await convert(service, { contentId: content.id, resultAction: 'NEW_CONTENT', newContentSpecification: { parentId: folder.id, typeName: 'scan' } })).body.jobId);
    expect(job.serviceRequestJob).toMatchObject({ state: 'panic', reasonCode: 'conflict' });
    expect(await pending()).toBe(pendingBefore);
    expect(await storedFiles(service)).toEqual(before);
  });

  it('keeps the specification’s name as given when its extension is one of the format’s (scan.jpg for jpeg), else gives the format’s', async () => {
    const folder = await newFolder(service, 'named');
    for (const [name, format, expected] of [['y-conv.jpg', 'jpeg', 'y-conv.jpg'], ['Page.TIF', 'tiff', 'Page.TIF'], ['other.jpg', 'png', 'other.png']] as const) {
      const { job } = await convertBytes(service, textPdf(1), `source-${format}.pdf`, { resultAction: 'NEW_CONTENT', targetFormat: format, newContentSpecification: { name, parentId: folder.id } });
      expect(job.state, name).toBe('Done');
      expect(job.serviceRequestJob.targetName).toBe(expected);
    }
    const children = await call(contentUrl(service, `/folder/${folder.id}/children`));
    expect(children.body.entries.map((e: any) => e.name).sort()).toEqual(['Page.TIF', 'other.png', 'y-conv.jpg']);
  });
});

describe('images convert with sharp', () => {
  const image = (format: 'png' | 'jpeg' | 'gif' | 'webp' | 'tiff') =>
    sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .toFormat(format)
      .toBuffer();
  for (const [from, to] of [
    ['png', 'webp'],
    ['jpeg', 'tiff'],
    ['gif', 'png'],
    ['webp', 'jpeg'],
    ['tiff', 'png'],
  ] as const) {
    it(`${from} → ${to}`, async () => {
      const { content, job } = await convertBytes(service, await image(from), `picture.${from}`, { targetFormat: to });
      expect(job.state).toBe('Done');
      const [page] = (await call(contentUrl(service, `/content/${content.id}/representations`))).body.entries;
      expect(page).toMatchObject({ format: to, width: 64, height: 48, page: 1, pageCount: 1 });
      const bytes = Buffer.from(await (await fetch(contentUrl(service, `/representations/${page.id}/download`))).arrayBuffer());
      expect((await sharp(bytes).metadata()).format).toBe(to === 'tiff' ? 'tiff' : to);
    });
  }

  it('to WebP (16383 pixels a side at most), a wider image or PDF page is scaled to fit', async () => {
    const wide = await sharp({ create: { width: 17000, height: 50, channels: 3, background: { r: 0, g: 90, b: 200 } } }).png().toBuffer();
    // 14400 × 10 points: 30000 × 20 pixels at 150 DPI
    const banner = buildPdf([{ width: 14400, height: 10, content: '0 0 1 rg 0 0 14400 10 re f' }]);
    for (const [bytes, name, height] of [[wide, 'wide.png', 48], [banner, 'banner.pdf', 11]] as const) {
      const { content, job } = await convertBytes(service, bytes, name, { targetFormat: 'webp' });
      expect(job.state, job.serviceRequestJob.errorMessage).toBe('Done');
      const [page] = (await call(contentUrl(service, `/content/${content.id}/representations`))).body.entries;
      expect(page).toMatchObject({ width: 16383, height });
      const stored = await sharp(Buffer.from(await (await fetch(contentUrl(service, `/representations/${page.id}/download`))).arrayBuffer())).metadata();
      expect([stored.format, stored.width, stored.height]).toEqual(['webp', 16383, height]);
    }
  });

  it('a content that is neither a PDF nor an image ends in panic (unsupportedMediaType)', async () => {
    const { job } = await convertBytes(service, Buffer.from('just some text'), 'notes.txt');
    expect(job.state).toBe('panic');
    expect(job.serviceRequestJob).toMatchObject({ reasonCode: 'unsupportedMediaType', errorMessage: expect.stringContaining('notes.txt (text/plain) cannot be converted') });
  });
});

describe('bad requests are refused at once', () => {
  it('targetFormat, resultAction, a missing contentId: 400 illegalArguments', async () => {
    const content = await newContent(service, { name: 'ok.pdf', bytes: textPdf(1) });
    for (const body of [
      { contentId: content.id, targetFormat: 'bmp' },
      { contentId: content.id, resultAction: 'DELETE' },
      { contentId: '' },
    ]) {
      const answer = await convert(service, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ _type: 'svc.model.error.ErrorResponse', reasonCode: 'illegalArguments' });
    }
    const bad = await convert(service, { contentId: content.id, targetFormat: 'bmp' });
    expect(bad.body.message).toContain('targetFormat');
  });

  it('an unknown content or folder of new contents: 404; an unknown job: 404', async () => {
    const unknown = await convert(service, { contentId: 'no-such-content' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.reasonCode).toBe('notFound');
    const content = await newContent(service, { name: 'orphan.pdf', bytes: textPdf(1) });
    const noFolder = await convert(service, { contentId: content.id, resultAction: 'NEW_CONTENT', newContentSpecification: { parentId: 'no-such-folder' } });
    expect(noFolder.status).toBe(404);
    expect((await jobStatus(service, 'no-such-job')).status).toBe(404);
  });

  it("another user's job is not found; the administrator sees it", async () => {
    const alice = await service.createUserSession('alice');
    const bob = await service.createUserSession('bob');
    const content = await newContent(service, { name: 'alice.pdf', bytes: textPdf(1), session: alice });
    const jobId = (await convert(service, { contentId: content.id }, { session: alice })).body.jobId;
    expect((await jobStatus(service, jobId, { session: bob })).status).toBe(404);
    expect((await jobStatus(service, jobId)).status).toBe(200);
    await finishedJob(service, jobId, { session: alice });
    const bobs = await call(contentUrl(service, '/jobs', {}, bob));
    expect(bobs.body).toMatchObject({ count: 0, entries: [] });
  });
});

describe('GET C/jobs: the Jobs list of the cache area', () => {
  it('newest first, filtered by state, paged, count = all matches', async () => {
    // the uploads of the tests before submit text extraction jobs a moment later (one per window): the
    // list is read once they are all in, else one arrives between the two reads compared below
    const until = Date.now() + 30_000;
    const unsettled = async () =>
      (await sql<{ n: string }>(service, `select (select count(*) from text_extraction_queue) + (select count(*) from service_job where state in ('pending', 'running')) as n`))[0]!.n !== '0';
    while ((await unsettled()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    const all = await call(contentUrl(service, '/jobs', { limit: 1000 }));
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(all.body.entries.length);
    expect(all.body.count).toBeGreaterThan(5);
    const created = all.body.entries.map((e: any) => e.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    const panics = await call(contentUrl(service, '/jobs', { state: 'panic' }));
    expect(panics.body.count).toBeGreaterThan(0);
    expect(panics.body.entries.every((e: any) => e.state === 'panic' && e.errorMessage && e.reasonCode && e.stackTrace)).toBe(true);
    const page = await call(contentUrl(service, '/jobs', { limit: 2, offset: 1 }));
    expect(page.body.count).toBe(all.body.count);
    expect(page.body.entries.map((e: any) => e.id)).toEqual(all.body.entries.slice(1, 3).map((e: any) => e.id));
    expect((await call(contentUrl(service, '/jobs', { state: 'finished' }))).status).toBe(400);
    expect((await call(contentUrl(service, '/jobs', { limit: 1001 }))).status).toBe(400);
  });
});

describe('the same through GraphQL (content subgraph, through the gateway)', () => {
  it('convertToImage, jobStatus, jobs, representations', async () => {
    const content = await newContent(service, { name: 'graphql.pdf', bytes: textPdf(1) });
    const started = await service.graphql<{ convertToImage: { jobId: string; duration: number } }>(
      'mutation($input: ImageConversionInput!) { convertToImage(repository: "default", input: $input) { jobId duration } }',
      { input: { contentId: content.id, resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'jpeg' } },
    );
    expect(started.errors).toBeUndefined();
    const jobId = started.data!.convertToImage.jobId;
    await finishedJob(service, jobId);
    const status = await service.graphql<{ jobStatus: { state: string; serviceRequestJob: Record<string, unknown> } }>(
      'query($id: ID!) { jobStatus(repository: "default", jobId: $id) { state serviceRequestJob { id state percentage tries contentIds resultAction } } }',
      { id: jobId },
    );
    expect(status.data!.jobStatus).toEqual({ state: 'Done', serviceRequestJob: { id: jobId, state: 'Done', percentage: 100, tries: 1, contentIds: [content.id], resultAction: 'CONTENT_REPRESENTATION' } });
    // the newest Done conversion: the upload's text extraction, submitted a moment after it, may be newer
    const jobs = await service.graphql<{ jobs: { count: number; entries: { id: string; conversionType: string }[] } }>(
      '{ jobs(repository: "default", state: Done, limit: 3) { count entries { id conversionType } } }',
    );
    expect(jobs.data!.jobs.entries.find((job) => job.conversionType === 'IMAGE')).toEqual({ id: jobId, conversionType: 'IMAGE' });
    const representations = await service.graphql<{ representations: { count: number; entries: { format: string }[] } }>(
      'query($id: ID!) { representations(repository: "default", contentId: $id) { count entries { format } } }',
      { id: content.id },
    );
    expect(representations.data!.representations).toEqual({ count: 1, entries: [{ format: 'jpeg' }] });
    const bad = await service.graphql('mutation { convertToImage(repository: "default", input: { contentId: "x", resultAction: NEW_CONTENT, targetFormat: bmp }) { jobId } }');
    expect(bad.errors).toBeDefined();
  });
});
