import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentUrl, newContent, newFolder, restDatePattern as restDate, sql } from '../../../test/helpers/entries.js';
import { call, startTestService, type TestService } from '../../../test/helpers/service.js';

let service: TestService;

const statistics = (repositoryId: string, session: string | null = service.adminSession) =>
  call(`${service.adminBase}/repository/statistics?${new URLSearchParams({ repositoryId, ...(session === null ? {} : { sessionId: session }) })}`);

beforeAll(async () => {
  service = await startTestService();
  const folder = await newFolder(service, 'f1');
  await newFolder(service, 'f2', folder.id);
  await newContent(service, { name: 'small.txt', parentId: folder.id, bytes: 'x'.repeat(100) });
  await newContent(service, { name: 'mid.bin', bytes: new Uint8Array(2 * 1024 * 1024) });
  const gone = await newContent(service, { name: 'gone.txt', bytes: 'abc' });
  expect((await call(contentUrl(service, `/content/${gone.id}`), { method: 'DELETE' })).status).toBe(204);
  // a content whose resource size is unknown (as after an interrupted import): a residual
  const em = service.services.orm.em.fork();
  await em.getConnection().execute(`update resource set file_size = null where id = (select resource_id from entry where name = 'small.txt')`).catch(async () => {
    // the column is not nullable: a content without a resource is the residual instead
    await em.getConnection().execute(`update entry set resource_id = null where name = 'small.txt'`);
  });
});
afterAll(() => service?.stop());

describe('GET A/repository/statistics (spec endpoint 13)', () => {
  it('answers every field of the spec, computed by SQL over the latest versions', async () => {
    const { status, body } = await statistics('svc.repository.default');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      _type: 'svc.model.deployment.service.statistics.GetRepositoryStatisticsResponse',
      name: 'default',
      repositoryTechnicalName: 'default',
      type: 'STANDARD',
      createdBy: 'admin',
      modifiedBy: 'admin',
      // the spec's "Dates": yyyy-MM-ddTHH:mm:ss.SSS+0000
      createdAt: expect.stringMatching(restDate),
      modifiedAt: expect.stringMatching(restDate),
      executionDate: expect.stringMatching(restDate),
      duration: expect.any(Number),
    });
    expect(body.contentStatistics).toMatchObject({
      numberOfContents: 3,
      numberOfFolders: 2,
      numberOfActiveContents: 2,
      numberOfActiveFolders: 2,
      numberOfDeactivatedContents: 1,
      numberOfDeactivatedFolders: 0,
      size: 2 * 1024 * 1024 + 3,
      minSize: 3,
      maxSize: 2 * 1024 * 1024,
      lastModifiedBy: 'admin',
      lastModifiedAt: expect.any(String),
      sizeDistribution: { residuals: 1, size_0_1MB: 1, size_1MB_10MB: 1, size_10MB_100MB: 0, size_100MB_1GB: 0, size_1GB_10GB: 0 },
    });
    expect(body.contentStatistics.averageSize).toBeCloseTo((2 * 1024 * 1024 + 3) / 2);
    expect(body.cacheStatistics).toEqual({
      numberOfDocuments: 0,
      numberOfPages: 0,
      numberOfRepresentations: 0,
      numberOfSourceRepresentations: 0,
      representationsSize: 0,
      representationsMinSize: 0,
      representationsMaxSize: 0,
      representationsAverageSize: 0,
      sourceRepresentationsSize: 0,
      sourceRepresentationsMinSize: 0,
      sourceRepresentationsMaxSize: 0,
      sourceRepresentationsAverageSize: 0,
      representationsStatus: {},
    });
    // the texts of the uploads above may still wait for their extraction job: that notice comes and goes
    const notices = body.notifications.filter((notice: { command: string }) => !notice.command.includes('wait for their text'));
    expect(notices).toEqual([{ command: expect.stringContaining('1 content(s) have no resource'), executeManually: true }]);
  });

  it('answers 404, 400, 403 and 401 on its error paths; the gateway answers the same figures', async () => {
    expect((await statistics('svc.repository.nowhere')).status).toBe(404);
    expect((await statistics('default')).status).toBe(400);
    expect((await statistics('svc.repository.default', await service.createUserSession('gus'))).status).toBe(403);
    expect((await statistics('svc.repository.default', null)).status).toBe(401);
    const viaGateway = await service.graphql<{ repositoryStatistics: { contentStatistics: { numberOfContents: number } } }>(
      '{ repositoryStatistics(repositoryId: "svc.repository.default") { contentStatistics { numberOfContents } } }',
    );
    expect(viaGateway.data?.repositoryStatistics.contentStatistics.numberOfContents).toBe(3);
  });

  it('sums the representations and, once per source content, the sizes of their sources', async () => {
    // three pages of mid.bin (2 MiB): one source, three rows
    const rows = [
      ['statistics-test-r1', 1, 100, 'DONE'],
      ['statistics-test-r2', 2, 300, 'DONE'],
      ['statistics-test-r3', 3, 200, 'FAILED'],
    ] as const;
    for (const [id, page, size, status] of rows) {
      await sql(
        service,
        `insert into representation (id, repository_id, source_entry_id, format, page, page_count, status, mime_type, file_size, width, height, storage_path)
         select '${id}', 'svc.repository.default', id, 'png', ${page}, 3, '${status}', 'image/png', ${size}, 1, 1, 'nowhere'
           from entry where name = 'mid.bin' and is_latest`,
      );
    }
    try {
      const { body } = await statistics('svc.repository.default');
      expect(body.cacheStatistics).toEqual({
        numberOfDocuments: 1,
        numberOfPages: 3,
        numberOfRepresentations: 3,
        numberOfSourceRepresentations: 1,
        representationsSize: 600,
        representationsMinSize: 100,
        representationsMaxSize: 300,
        representationsAverageSize: 200,
        sourceRepresentationsSize: 2 * 1024 * 1024,
        sourceRepresentationsMinSize: 2 * 1024 * 1024,
        sourceRepresentationsMaxSize: 2 * 1024 * 1024,
        sourceRepresentationsAverageSize: 2 * 1024 * 1024,
        representationsStatus: { DONE: 2, FAILED: 1 },
      });
    } finally {
      await sql(service, `delete from representation where id like 'statistics-test-r%'`);
    }
  });

  it('counts a checked-out content once (its working copy is no content of its own), and failed conversions only as failed conversions', async () => {
    const before = (await statistics('svc.repository.default')).body.contentStatistics;
    const content = await newContent(service, { name: 'checked-out.txt', bytes: 'x'.repeat(10) });
    expect((await call(contentUrl(service, `/content/${content.id}/check-out`), { method: 'POST' })).status).toBe(200);
    // a text extraction that failed is not a failed conversion
    await sql(
      service,
      `insert into service_job (id, repository_id, job_name, conversion_type, client_username, owner, partition, state)
       values ('statistics-test-failed-extraction', 'svc.repository.default', 'extractText', 'TEXT', 'admin', 'admin', 'access.svc.content.default', 'panic')`,
    );
    try {
      const { body } = await statistics('svc.repository.default');
      expect(body.contentStatistics).toMatchObject({
        numberOfContents: before.numberOfContents + 1,
        numberOfActiveContents: before.numberOfActiveContents + 1,
        size: before.size + 10,
      });
      expect(body.notifications).not.toContainEqual(expect.objectContaining({ command: expect.stringContaining('conversion job(s) failed') }));
    } finally {
      await sql(service, `delete from service_job where id = 'statistics-test-failed-extraction'`);
      await call(contentUrl(service, `/content/${content.id}`, { permanent: true }), { method: 'DELETE' });
    }
  });

  it('tells how many contents wait for their text to be extracted (the extraction queue)', async () => {
    // a queued text no job has taken yet (queued after every job's start: only the next job or the sweep takes it)
    await sql(service, `insert into text_extraction_queue (resource_id, repository_id) values ('statistics-test-waiting', 'svc.repository.default')`);
    try {
      const { body } = await statistics('svc.repository.default');
      expect(body.notifications).toContainEqual({ command: expect.stringMatching(/^[1-9]\d* content\(s\) wait for their text to be extracted/), executeManually: false });
    } finally {
      await sql(service, `delete from text_extraction_queue where resource_id = 'statistics-test-waiting'`);
    }
  });
});
