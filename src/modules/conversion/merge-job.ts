import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Services } from '../../context.js';
import { conflict } from '../../errors.js';
import { withLocalFiles } from '../../storage/store.js';
import { authorize } from '../access/policy.js';
import { nameClash, nameTaken } from '../entries/chronicles.js';
import { Entry, Resource } from '../entries/entry.entity.js';
import { requireEntry } from '../entries/queries.js';
import { jobScope } from '../entries/scope-of-job.js';
import { JobFailure, type JobHandler, type JobOutcome, type JobRun } from '../jobs/queue.js';
import { saveJobResult, saveLowlevelRequest } from '../jobs/records.js';
import { createResultContent, deletedSource, kindOf } from './convert-job.js';
import { checkInputFiles } from './limits.js';
import { mergedName, parseSpecification } from './operations.js';
import type { MergeInput, PdfMerger } from './pdf-merger.js';

/** The job's request (serializedRequest). */
interface MergeJobRequest {
  contentIds: string[];
  newContentSpecification: Record<string, unknown> | null;
}

/** What the job produced (serializedResult): the merged content, recorded before it is created so that a retry knows it may exist. */
interface MergeResult {
  pages: number;
  pagesPerInput: number[];
  contentId?: string;
  creating?: boolean;
}

/**
 * The `merge` job (POST C/convert/merge, DESIGN §12): the input limits first (number of files, each
 * size, total size, with the spec's messages), the result's name free in its folder, then the merge by
 * `merger` (outside the service's process; `percentage` moves per input), then the PDF as a new content.
 */
export function mergeJobHandler(services: Services, merger: PdfMerger): JobHandler {
  return async (run): Promise<JobOutcome> => {
    try {
      return await merge(run, services, merger);
    } catch (error) {
      // purged (or its folder deleted) after the job was submitted: that is the reason, whatever failed then
      const deleted = await deletedSource(run.em, run.record.contentIds);
      if (!deleted) throw error;
      throw new JobFailure('notFound', `content '${deleted}' was deleted during the merge`);
    }
  };
}

async function merge(run: JobRun, services: Services, merger: PdfMerger): Promise<JobOutcome> {
  const { record, em } = run;
  const request = record.serializedRequest as unknown as MergeJobRequest;
  const previousTry = (record.serializedResult as MergeResult | null) ?? undefined;
  if (previousTry?.contentId) return { result: { ...previousTry } };
  const scope = await jobScope(run, services);
  const sources: Entry[] = [];
  for (const id of record.contentIds) sources.push(await requireEntry(scope, id, 'CONTENT'));
  // deactivated, or its ACL changed, since the job was started: not merged (the rules of startMerge)
  for (const source of sources) await authorize(scope, 'download', { entry: source });
  const resources = await Promise.all(sources.map((source) => (source.resourceId ? em.findOne(Resource, { id: source.resourceId }) : null)));
  checkInputFiles(
    resources.map((resource, index) => ({ name: resource?.name ?? record.inputFilenames[index] ?? sources[index]!.name, size: resource?.fileSize ?? 0 })),
    scope.repository.limits ?? {},
    services.config,
  );
  const specification = parseSpecification(request.newContentSpecification);
  const name = mergedName(specification.name, sources[0]!.name);
  const retried = previousTry?.creating === true;
  if (!retried && (await nameTaken(scope, specification.parentId ?? null, name))) throw conflict(nameClash(name));
  // the merge process reads local files: the stored bytes, or scratch copies of them (S3)
  return withLocalFiles(services.contentStore, resources.map((resource) => resource!.storagePath), async (inputPaths) => {
    const inputs: MergeInput[] = [];
    for (const [index, resource] of resources.entries()) {
      const inputPath = inputPaths[index]!;
      inputs.push({ path: inputPath, fileName: resource!.name, kind: await kindOf(inputPath, resource!.mimeType, resource!.name, 'a PDF') });
    }
    await saveLowlevelRequest(em, record.id, {
      engine: 'pdf-lib',
      inputs: resources.map((resource, index) => ({ resourceId: resource!.id, mimeType: resource!.mimeType, kind: inputs[index]!.kind })),
      imagePage: 'A4, fitted inside a 36 pt margin, never enlarged',
      maxPixels: services.config.CONV_MAX_IMAGE_PIXELS,
    });
    const outputPath = path.join(services.cacheStore.scratchDirectory(), `merge-${record.id}-${record.tries}.pdf`);
    const result: MergeResult = { pages: 0, pagesPerInput: [] };
    try {
      await run.progress(5);
      result.pages = await merger.merge(
        { inputs, outputPath, maxPixels: services.config.CONV_MAX_IMAGE_PIXELS },
        async (index, pages) => {
          result.pagesPerInput[index] = pages;
          await run.progress(5 + (85 * (index + 1)) / inputs.length);
        },
        run.signal,
      );
      await saveJobResult(em, record.id, { ...result, creating: true });
      result.contentId = await createResultContent(run, scope, { path: outputPath, mimeType: 'application/pdf' }, name, specification, retried);
      await saveJobResult(em, record.id, { ...result });
    } finally {
      await rm(outputPath, { force: true });
    }
    return { result: { ...result } };
  });
}
