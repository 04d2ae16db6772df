import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertBytes } from '../../../test/helpers/conversion.js';
import { contentUrl, fileForm, newContent, newFolder, restDatePattern as restDate, sql } from '../../../test/helpers/entries.js';
import { textPdf } from '../../../test/helpers/pdf.js';
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

/**
 * The figures as the statistics were computed before they were kept in tallies: aggregates over every
 * latest entry and every representation. The tallies must answer the same after each kind of change.
 */
async function aggregated(repositoryId: string) {
  const MiB = 1024 * 1024;
  const [content] = await sql<Record<string, string | null>>(
    service,
    `select count(*) filter (where entry_type = 'CONTENT') as "numberOfContents", count(*) filter (where entry_type = 'FOLDER') as "numberOfFolders",
            count(*) filter (where entry_type = 'CONTENT' and active) as "numberOfActiveContents",
            count(*) filter (where entry_type = 'FOLDER' and active) as "numberOfActiveFolders",
            coalesce(sum(size), 0) as size, coalesce(min(size), 0) as "minSize", coalesce(max(size), 0) as "maxSize", coalesce(avg(size), 0) as "averageSize",
            count(*) filter (where entry_type = 'CONTENT' and size is null) as residuals,
            count(*) filter (where size < ${MiB}) as "size_0_1MB", count(*) filter (where size >= ${MiB} and size < ${10 * MiB}) as "size_1MB_10MB",
            count(*) filter (where size >= ${10 * MiB} and size < ${100 * MiB}) as "size_10MB_100MB",
            count(*) filter (where size >= ${100 * MiB} and size < ${1024 * MiB}) as "size_100MB_1GB", count(*) filter (where size >= ${1024 * MiB}) as "size_1GB_10GB"
       from (select entry_type, active, case when entry_type = 'CONTENT' then resource_file_size end as size
               from entry where repository_id = ? and is_latest and version_status is distinct from 'WORKING_COPY') e`,
    [repositoryId],
  );
  const [cache] = await sql<Record<string, string | null>>(
    service,
    `with sources as (select distinct source_entry_id from representation where repository_id = ?)
     select (select count(*) from sources) as "numberOfDocuments", count(*) as "numberOfRepresentations", coalesce(sum(file_size), 0) as "representationsSize",
            coalesce(min(file_size), 0) as "representationsMinSize", coalesce(max(file_size), 0) as "representationsMaxSize",
            coalesce(avg(file_size), 0) as "representationsAverageSize",
            (select coalesce(sum(e.resource_file_size), 0) from sources s join entry e on e.id = s.source_entry_id) as "sourceRepresentationsSize",
            (select coalesce(min(e.resource_file_size), 0) from sources s join entry e on e.id = s.source_entry_id) as "sourceRepresentationsMinSize",
            (select coalesce(max(e.resource_file_size), 0) from sources s join entry e on e.id = s.source_entry_id) as "sourceRepresentationsMaxSize",
            (select coalesce(avg(e.resource_file_size), 0) from sources s join entry e on e.id = s.source_entry_id) as "sourceRepresentationsAverageSize"
       from representation where repository_id = ?`,
    [repositoryId, repositoryId],
  );
  const statuses = await sql<{ status: string; count: string }>(service, 'select status, count(*) as count from representation where repository_id = ? group by status', [repositoryId]);
  const numbers = (row: Record<string, string | null>): Record<string, number> => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)]));
  const { residuals, size_0_1MB, size_1MB_10MB, size_10MB_100MB, size_100MB_1GB, size_1GB_10GB, ...counts } = numbers(content!);
  const figures: { contentStatistics: Record<string, any>; cacheStatistics: Record<string, any> } = {
    contentStatistics: {
      ...counts,
      numberOfDeactivatedContents: counts.numberOfContents! - counts.numberOfActiveContents!,
      numberOfDeactivatedFolders: counts.numberOfFolders! - counts.numberOfActiveFolders!,
      sizeDistribution: { residuals, size_0_1MB, size_1MB_10MB, size_10MB_100MB, size_100MB_1GB, size_1GB_10GB },
    },
    cacheStatistics: {
      ...numbers(cache!),
      numberOfPages: Number(cache!.numberOfRepresentations),
      numberOfSourceRepresentations: Number(cache!.numberOfDocuments),
      representationsStatus: Object.fromEntries(statuses.map((row) => [row.status, Number(row.count)])),
    },
  };
  return figures;
}

describe('statistics kept by every change (tallies) answer what the aggregates over all entries answer', () => {
  it('after uploads, versions, deletion, restore, moves, conversions and purges', async () => {
    const base = `${service.adminBase}/repository`;
    expect((await call(`${base}?sessionId=${service.adminSession}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'tallied' }) })).status).toBe(201);
    const tallied = { base: service.contentBase.replace('.default/', '.tallied/') };
    const repositoryId = 'svc.repository.tallied';
    const expectSame = async (step: string) => {
      const { status, body } = await statistics(repositoryId);
      expect(status, step).toBe(200);
      const expected = await aggregated(repositoryId);
      const { lastModifiedAt, lastModifiedBy, ...contentFigures } = body.contentStatistics;
      expect({ step, ...contentFigures }).toEqual({ step, ...expected.contentStatistics, averageSize: expect.closeTo(expected.contentStatistics.averageSize, 6) });
      expect({ step, ...body.cacheStatistics }).toEqual({
        step,
        ...expected.cacheStatistics,
        representationsAverageSize: expect.closeTo(expected.cacheStatistics.representationsAverageSize, 6),
        sourceRepresentationsAverageSize: expect.closeTo(expected.cacheStatistics.sourceRepresentationsAverageSize, 6),
      });
      return body;
    };
    const url = (path: string, query: Record<string, string> = {}) => contentUrl(service, path, query, service.adminSession, tallied.base);

    const empty = await expectSame('empty');
    expect(empty.contentStatistics.numberOfFolders).toBe(0);
    const folder = await newFolder(service, 'a', undefined, undefined, tallied.base);
    const other = await newFolder(service, 'b', undefined, undefined, tallied.base);
    const small = await newContent(service, { name: 'small.txt', parentId: folder.id, bytes: 'x'.repeat(10), base: tallied.base });
    const large = await newContent(service, { name: 'large.bin', bytes: new Uint8Array(3 * 1024 * 1024), base: tallied.base });
    expect((await expectSame('uploads')).contentStatistics).toMatchObject({ numberOfContents: 2, numberOfFolders: 2, minSize: 10, maxSize: 3 * 1024 * 1024 });

    expect((await call(url(`/content/${small.id}`), { method: 'DELETE' })).status).toBe(204);
    expect((await expectSame('deleted')).contentStatistics.numberOfDeactivatedContents).toBe(1);
    expect((await call(url(`/content/${small.id}/restore`), { method: 'POST' })).status).toBe(200);
    await expectSame('restored');
    expect((await call(url(`/folder/${other.id}`), { method: 'DELETE' })).status).toBe(204);
    expect((await expectSame('folder deleted (permanently: folders have no trash)')).contentStatistics).toMatchObject({ numberOfFolders: 1, numberOfDeactivatedFolders: 0 });

    expect((await call(url(`/content/${small.id}/check-out`), { method: 'POST' })).status).toBe(200);
    await expectSame('checked out');
    const checkedIn = await call(url(`/content/${small.id}/check-in`), { method: 'POST', body: fileForm('y'.repeat(2000), 'small.txt') });
    expect(checkedIn.status).toBe(200);
    expect((await expectSame('checked in')).contentStatistics).toMatchObject({ numberOfContents: 2, minSize: 2000 });

    const { content: pdf, job } = await convertBytes(service, textPdf(3), 'three.pdf', {}, tallied);
    expect(job.state).toBe('Done');
    const converted = await expectSame('converted');
    expect(converted.cacheStatistics).toMatchObject({ numberOfDocuments: 1, numberOfRepresentations: 3, representationsStatus: { READY: 3 } });
    // what a change does now and then (2 %): a repository's tally rows folded into one keep their sums
    await sql(service, 'select entry_tally_fold(?), representation_tally_fold(?)', [repositoryId, repositoryId]);
    expect(await sql(service, 'select count(*)::int as n from entry_tally where repository_id = ?', [repositoryId])).toEqual([{ n: 1 }]);
    await expectSame('folded');

    expect((await call(url(`/content/${pdf.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    expect((await expectSame('purged with its representations')).cacheStatistics).toMatchObject({ numberOfDocuments: 0, numberOfRepresentations: 0 });
    expect((await call(url(`/content/${large.id}`, { permanent: 'true' }), { method: 'DELETE' })).status).toBe(204);
    expect((await expectSame('purged')).contentStatistics).toMatchObject({ numberOfContents: 1, maxSize: 2000 });
  });
});
