import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Services } from '../../context.js';
import type { Principal } from '../auth/principal.js';
import { startImageConversion } from '../conversion/operations.js';
import { listRepresentations } from '../conversion/representations.js';
import { contentForDownload, createContent, getContent } from '../entries/contents.js';
import { copyContent } from '../entries/copy.js';
import { deleteContent, deleteFolder } from '../entries/deletion.js';
import { createFolder, getFolder } from '../entries/folders.js';
import type { EntryScope } from '../entries/scope.js';
import { addTags, removeTags } from '../entries/tags.js';
import { updateContent, updateFolder } from '../entries/update.js';
import { stageUpload } from '../entries/uploads.js';
import { finalStates, findJob } from '../jobs/records.js';
import { partitionOf, type RepositoryRecord } from '../repositories/operations.js';
import { home, searchByProperties } from '../search/by-properties.js';
import { searchByText } from '../search/by-text.js';
import { checkIn, checkOut } from '../versions/operations.js';
import { saveDeepCheckReport, reportUrlOf } from './deep-check-reports.js';
import { onePagePdf } from './sample-pdf.js';
import { readStored } from '../../storage/store.js';

export type ScenarioStatus = 'passed' | 'failed' | 'skipped';

/** Spec "Check responses": a scenario, with what the run found (status, duration, error). */
export interface DeepCheckScenario {
  scenarioName: string;
  scenarioDescription: string;
  status: ScenarioStatus;
  /** ms */
  duration: number;
  errorMessage: string | null;
}

/** Spec "Check responses": a numbered feature (`<n>. <title>`) and its scenarios. */
export interface DeepCheckFeature {
  featureName: string;
  featureDescription: string;
  status: ScenarioStatus;
  duration: number;
  listScenarios: DeepCheckScenario[];
}

/** Spec DeepHealthCheckResponse (without its `_type`). */
export interface DeepCheckResult {
  _id: string;
  checkStatus: 'ok' | 'failed';
  duration: number;
  elapsedTimeInMs: number;
  message: string;
  reportUrl: string;
  testName: string;
  testDescription: string;
  testTime: string;
  test: {
    accessId: string;
    code: 'success' | 'failure';
    listFeatures: DeepCheckFeature[];
    reportLocation: string;
    testDescription: string;
    testName: string;
    testTime: string;
  };
}

/** `yyyy.MM.dd.HH.mm.ss` in UTC (spec, DESIGN §0). */
export function testTimeOf(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getUTCFullYear()}.${two(date.getUTCMonth() + 1)}.${two(date.getUTCDate())}.${two(date.getUTCHours())}.${two(date.getUTCMinutes())}.${two(date.getUTCSeconds())}`;
}

/** A scenario that cannot run because one it builds on did not pass. */
class ScenarioSkipped extends Error {}

/** What the scenarios leave for the ones after them. */
interface RunState {
  scratchId?: string;
  contentId?: string;
  md5?: string;
  folderId?: string;
  copyId?: string;
  /** the version label the content should have now */
  version?: string;
  converted?: boolean;
  representationPaths: string[];
  workingCopyId?: string;
}

interface Scenario {
  name: string;
  description: string;
  run(run: DeepCheckRun): Promise<void>;
}

interface Feature {
  title: string;
  description: string;
  scenarios: Scenario[];
}

/** The state a scenario needs from an earlier one: skipped (not failed again) when that one did not pass. */
function need<T>(value: T | undefined, scenario: string): T {
  if (value === undefined) throw new ScenarioSkipped(`needs ${scenario}, which did not pass`);
  return value;
}

function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

/**
 * The spec's scenarios in its feature order ("Check responses"), each as a client would call it, through
 * the domain operations. The spec names check-in before check-out; a client checks out first, so the
 * two features run in that order (docs/administration.md).
 */
const features: Feature[] = [
  {
    title: 'Get home',
    description: 'the root level of the repository answers',
    scenarios: [{ name: 'GET HOME', description: 'lists the root-level entries, folders first', run: async (r) => void (await home(r.scope(), { limit: 10 })) }],
  },
  {
    title: 'Upload',
    description: 'a new content is stored with its bytes',
    scenarios: [
      {
        name: 'CREATE CONTENT',
        description: 'uploads a one-page PDF into the scratch folder: version 1.0, CURRENT',
        run: async (r) => {
          const scope = r.scope();
          const bytes = onePagePdf(`deep check ${r.token}`);
          const upload = await stageUpload(scope, { source: Readable.from([bytes]), fileName: 'deep-check.pdf', mimeType: 'application/pdf' });
          const content = await createContent(scope, { uploadId: upload.id, parentId: need(r.state.scratchId, 'the scratch folder') });
          expect(content.version === '1.0' && content.versionStatus === 'CURRENT', `the new content is ${content.version} ${content.versionStatus}, not 1.0 CURRENT`);
          r.state.contentId = content.id;
          r.state.version = content.version ?? undefined;
          r.state.md5 = createHash('md5').update(bytes).digest('hex');
        },
      },
    ],
  },
  {
    title: 'Create folder',
    description: 'a folder is created inside another',
    scenarios: [
      {
        name: 'CREATE FOLDER',
        description: 'creates a folder in the scratch folder',
        run: async (r) => {
          const folder = await createFolder(r.scope(), { name: 'folder', parentId: need(r.state.scratchId, 'the scratch folder') });
          r.state.folderId = folder.id;
        },
      },
    ],
  },
  {
    title: 'Tagging',
    description: 'a content carries tags',
    scenarios: [
      {
        name: 'ADD TAG',
        description: "adds the run's tag to the content",
        run: async (r) => {
          const tagged = await addTags(r.scope(), need(r.state.contentId, 'CREATE CONTENT'), [r.tag]);
          expect(tagged.tags?.includes(r.tag) === true, 'the tag is not on the content');
        },
      },
    ],
  },
  {
    title: 'Search',
    description: 'the search by properties finds the content',
    scenarios: [
      {
        name: 'SEARCH BY PARENT ID AND/OR TAG',
        description: "searches the scratch folder for the run's tag: exactly the content",
        run: async (r) => {
          const contentId = need(r.state.contentId, 'CREATE CONTENT');
          const found = await searchByProperties(r.scope(), { parentId: need(r.state.scratchId, 'the scratch folder'), tags: [r.tag] }, {});
          expect(found.count === 1 && found.entries[0]?.id === contentId, `the search found ${found.count} entries, not the content alone`);
        },
      },
    ],
  },
  {
    title: 'Copy',
    description: 'a content is copied into another folder',
    scenarios: [
      {
        name: 'COPY CONTENT',
        description: 'copies the content into the folder: a new chronicle',
        run: async (r) => {
          const contentId = need(r.state.contentId, 'CREATE CONTENT');
          const copy = await copyContent(r.scope(), contentId, { parentId: need(r.state.folderId, 'CREATE FOLDER') });
          expect(copy.chronicalId !== contentId, 'the copy shares the chronicle of the original');
          r.state.copyId = copy.id;
        },
      },
    ],
  },
  {
    title: 'Update',
    description: 'contents and folders change, tags go',
    scenarios: [
      {
        name: 'UPDATE CONTENT',
        description: 'sets a property of the content: same version',
        run: async (r) => {
          const updated = await updateContent(r.scope(), need(r.state.contentId, 'CREATE CONTENT'), { properties: { deepCheck: r.token } });
          expect(updated.properties?.deepCheck === r.token && updated.version === '1.0', 'the property is not set, or the version changed');
        },
      },
      {
        name: 'UPDATE FOLDER',
        description: 'renames the folder',
        run: async (r) => {
          const renamed = await updateFolder(r.scope(), need(r.state.folderId, 'CREATE FOLDER'), { name: 'folder-renamed' });
          expect(renamed.name === 'folder-renamed', 'the folder kept its name');
        },
      },
      {
        name: 'DELETE TAG',
        description: "removes the run's tag from the content",
        run: async (r) => {
          const untagged = await removeTags(r.scope(), need(r.state.contentId, 'CREATE CONTENT'), [r.tag]);
          expect(!untagged.tags?.includes(r.tag), 'the tag is still on the content');
        },
      },
    ],
  },
  {
    title: 'Convert',
    description: 'a conversion job renders the content',
    scenarios: [
      {
        name: 'CONVERT CONTENT TO IMAGES',
        description: 'converts the PDF to PNG page images (CONTENT_REPRESENTATION) and waits for the job',
        run: async (r) => {
          const job = await startImageConversion(r.scope(), { contentId: need(r.state.contentId, 'CREATE CONTENT'), resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png' });
          const ended = await r.waitFor(`conversion job ${job.id}`, async (em) => {
            const current = await findJob(em, job.id);
            return current && finalStates.includes(current.state) ? current : undefined;
          });
          expect(ended.state === 'Done', `conversion job ${job.id} ended in ${ended.state}${ended.errorMessage ? `: ${ended.errorMessage}` : ''}`);
          r.state.converted = true;
        },
      },
    ],
  },
  {
    title: 'Get conversion result',
    description: 'the page images are in the cache area',
    scenarios: [
      {
        name: 'GET CONVERTED IMAGES',
        description: 'lists the representations of the content and reads the first page image',
        run: async (r) => {
          need(r.state.converted, 'CONVERT CONTENT TO IMAGES');
          const scope = r.scope();
          const { count, entries } = await listRepresentations(scope, need(r.state.contentId, 'CREATE CONTENT'));
          r.state.representationPaths = entries.map((entry) => entry.storagePath);
          expect(count >= 1, 'the content has no page images');
          const png = await readStored(scope.services.cacheStore, entries[0]!.storagePath, entries[0]!.fileSize);
          expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'the first page image is not a PNG');
        },
      },
    ],
  },
  {
    title: 'Full text search',
    description: "the content's text is found once extracted",
    scenarios: [
      {
        name: 'ELASTIC SEARCH',
        description: "searches the full text for the word of the run's PDF, waiting for the extraction",
        run: async (r) => {
          const contentId = need(r.state.contentId, 'CREATE CONTENT');
          if (!r.repository.fullTextEnabled) throw new ScenarioSkipped(`full text is disabled for repository '${r.repository.name}'`);
          await r.waitFor('the extracted text', async (em) => {
            const found = await searchByText(r.scope(em), r.token, { limit: 10 });
            return found.entries.some((entry) => entry.id === contentId) ? true : undefined;
          });
        },
      },
    ],
  },
  {
    title: 'Check-out',
    description: 'a working copy is taken',
    scenarios: [
      {
        name: 'CHECK-OUT CONTENT',
        description: 'checks the content out: a WORKING_COPY, the chronicle locked',
        run: async (r) => {
          const workingCopy = await checkOut(r.scope(), need(r.state.contentId, 'CREATE CONTENT'));
          expect(workingCopy.versionStatus === 'WORKING_COPY', `the check-out answered ${workingCopy.versionStatus}`);
          r.state.workingCopyId = workingCopy.id;
        },
      },
    ],
  },
  {
    title: 'Check-in',
    description: 'the working copy becomes the next version',
    scenarios: [
      {
        name: 'CHECK-IN CONTENT',
        description: 'checks the working copy in as a major version: 2.0, CURRENT',
        run: async (r) => {
          const version = await checkIn(r.scope(), need(r.state.workingCopyId, 'CHECK-OUT CONTENT'), { major: true, comment: 'deep check' });
          expect(version.version === '2.0' && version.versionStatus === 'CURRENT', `the check-in answered ${version.version} ${version.versionStatus}`);
          r.state.contentId = version.id;
          r.state.version = version.version ?? undefined;
        },
      },
    ],
  },
  {
    title: 'Download',
    description: 'the bytes come back as uploaded',
    scenarios: [
      {
        name: 'DOWNLOAD CONTENT',
        description: 'reads the bytes of the latest version and compares their MD5',
        run: async (r) => {
          const scope = r.scope();
          const { resource } = await contentForDownload(scope, need(r.state.contentId, 'CREATE CONTENT'));
          const bytes = await readStored(scope.services.contentStore, resource.storagePath, resource.fileSize);
          expect(createHash('md5').update(bytes).digest('hex') === r.state.md5, 'the downloaded bytes differ from the uploaded ones');
        },
      },
    ],
  },
  {
    title: 'Get',
    description: 'a content is read by its id',
    scenarios: [
      {
        name: 'GET CONTENT BY CONTENT ID',
        description: 'reads the latest version by id (2.0 after the check-in)',
        run: async (r) => {
          const content = await getContent(r.scope(), need(r.state.contentId, 'CREATE CONTENT'));
          expect(content.version === r.state.version, `the content is version ${content.version}, not ${r.state.version}`);
        },
      },
    ],
  },
  {
    title: 'Delete content',
    description: 'a content is removed',
    scenarios: [
      {
        name: 'DELETE CONTENT',
        description: 'deletes the content permanently (every version); reading it is then a 404',
        run: async (r) => {
          const contentId = need(r.state.contentId, 'CREATE CONTENT');
          await deleteContent(r.scope(), contentId, { permanent: true });
          await expectGone(() => getContent(r.scope(), contentId), 'the deleted content');
        },
      },
    ],
  },
  {
    title: 'Delete folder',
    description: 'a folder is removed with what it holds',
    scenarios: [
      {
        name: 'DELETE FOLDER',
        description: 'deletes the folder with the copy in it; reading it is then a 404',
        run: async (r) => {
          const folderId = need(r.state.folderId, 'CREATE FOLDER');
          await deleteFolder(r.scope(), folderId, { recursive: true });
          await expectGone(() => getFolder(r.scope(), folderId), 'the deleted folder');
        },
      },
    ],
  },
];

async function expectGone(read: () => Promise<unknown>, what: string): Promise<void> {
  const outcome = await read().then(
    () => 'found',
    (error: unknown) => ((error as { reasonCode?: string }).reasonCode === 'notFound' ? 'gone' : (error as Error).message),
  );
  expect(outcome === 'gone', `${what} is still there (${outcome})`);
}

export interface DeepCheckOptions {
  /** the whole run, scenarios and waits (DEEP_CHECK_TIMEOUT_MS) */
  timeoutMs: number;
  /** each wait for a job (DEEP_CHECK_WAIT_MS), within the whole run's deadline */
  waitMs: number;
  pollMs?: number;
}

/** One run: the caller in the repository, the scratch folder and what its scenarios found. */
class DeepCheckRun {
  readonly token = `dc${randomBytes(6).toString('hex')}`;
  readonly tag = `deep-check-${this.token}`;
  readonly state: RunState = { representationPaths: [] };
  readonly deadline: number;
  /** the scratch folder's creation and the scenarios started: cleaning up waits for them, even when the deadline cut them off */
  readonly started: Promise<unknown>[] = [];

  constructor(
    readonly services: Services,
    readonly principal: Principal,
    readonly repository: RepositoryRecord,
    readonly options: DeepCheckOptions,
  ) {
    this.deadline = performance.now() + options.timeoutMs;
  }

  /** A fresh unit of work, as each request of a client has. */
  scope(em = this.services.orm.em.fork() as EntityManager): EntryScope {
    return { em, services: this.services, principal: this.principal, repository: this.repository, logger: this.services.logger.child({ deepCheck: this.token }) };
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.started.push(work);
    return work;
  }

  remaining(): number {
    return this.deadline - performance.now();
  }

  /** Polls `probe` (in a fresh unit of work each time) until it answers, for at most DEEP_CHECK_WAIT_MS and never past the deadline. */
  async waitFor<T>(what: string, probe: (em: EntityManager) => Promise<T | undefined>): Promise<T> {
    const limit = Math.min(this.options.waitMs, this.remaining());
    const until = performance.now() + limit;
    for (;;) {
      const answer = await probe(this.services.orm.em.fork() as EntityManager);
      if (answer !== undefined) return answer;
      if (performance.now() >= until) throw new Error(`${what}: not there after ${Math.round(limit)} ms`);
      await sleep(this.options.pollMs ?? 100);
    }
  }
}

/** Starts `step` and waits for it at most `ms`: a step that hangs fails, and the run goes on to clean up. Past the deadline it does not start. */
async function bounded<T>(step: () => Promise<T>, ms: number, what: string): Promise<T> {
  if (ms <= 0) throw new Error(`the deep check's deadline passed before ${what}`);
  const work = step();
  const timer = new AbortController();
  try {
    return await Promise.race([
      work,
      sleep(ms, undefined, { signal: timer.signal }).then(() => {
        throw new Error(`${what} did not end within ${Math.round(ms)} ms (the deep check's deadline)`);
      }),
    ]);
  } finally {
    timer.abort();
    work.catch(() => undefined);
  }
}

async function runScenario(run: DeepCheckRun, scenario: Scenario): Promise<DeepCheckScenario> {
  const started = performance.now();
  let status: ScenarioStatus = 'passed';
  let errorMessage: string | null = null;
  try {
    await bounded(() => run.track(scenario.run(run)), run.remaining(), scenario.name);
  } catch (error) {
    status = error instanceof ScenarioSkipped ? 'skipped' : 'failed';
    errorMessage = (error as Error).message;
  }
  return { scenarioName: scenario.name, scenarioDescription: scenario.description, status, duration: Math.round(performance.now() - started), errorMessage };
}

/** Cleaning up may take this long past the deadline: waiting for the steps cut off, then removing the scratch folder. */
const cleanUpGraceMs = 10_000;
/** How long a run may last past its deadline at most (the clean-up's two bounded steps and saving the report). */
export const deepCheckGraceMs = 2 * cleanUpGraceMs + 5_000;

/** The scratch folder of a run: at the root, named so that runs (and what clients keep) never collide. */
const scratchFolderName = (token: string, started: Date) => `deep-check-${testTimeOf(started)}-${token}`;

/**
 * Removes the scratch folder with whatever the scenarios left in it (and the page images they made),
 * whatever failed. Bounded like the scenarios, with a grace of its own past the deadline.
 */
async function cleanUp(run: DeepCheckRun): Promise<string | undefined> {
  // what the deadline cut off goes on: wait for it (bounded), so that nothing lands in the folder after it is gone
  await bounded(() => Promise.allSettled(run.started), cleanUpGraceMs, 'the steps cut off').catch(() => undefined);
  const scratchId = run.state.scratchId;
  if (!scratchId) return undefined;
  try {
    const scope = run.scope();
    // a scenario cut off mid-way may have left the working copy checked out: ours, so the recursive deletion takes it
    await bounded(() => deleteFolder(scope, scratchId, { recursive: true }), cleanUpGraceMs, 'removing the scratch folder');
    await Promise.all(run.state.representationPaths.map((storagePath) => run.services.cacheStore.remove(storagePath)));
    return undefined;
  } catch (error) {
    run.services.logger.error({ err: error, scratchId, repository: run.repository.name }, 'the deep check could not remove its scratch folder');
    return `the scratch folder '${scratchId}' could not be removed: ${(error as Error).message}`;
  }
}

/** A scratch folder's name as `scratchFolderName` writes it (LIKE pattern; the token part is checked in SQL too). */
const scratchNamePattern = 'deep-check-____.__.__.__.__.__-dc%';

/**
 * Removes the scratch folders of runs that never cleaned up (their process died mid-run): ours by name,
 * at the root, and older than any run may last (the configured deadline and the clean-up's grace), so
 * a run going on beside this one keeps its folder.
 */
async function removeAbandonedScratchFolders(run: DeepCheckRun): Promise<void> {
  const maxAgeMs = run.services.config.DEEP_CHECK_TIMEOUT_MS + deepCheckGraceMs;
  const abandoned = await run.scope().em.execute<{ id: string }[]>(
    `select id from entry where repository_id = ? and parent_id is null and entry_type = 'FOLDER' and name like ?
        and name ~ '-dc[0-9a-f]{12}$' and created_at < now() - make_interval(secs => ?)`,
    [run.repository.id, scratchNamePattern, maxAgeMs / 1000],
  );
  for (const { id } of abandoned) {
    await deleteFolder(run.scope(), id, { recursive: true }).catch((error: unknown) =>
      run.services.logger.warn({ err: error, folderId: id, repository: run.repository.name }, 'an abandoned deep-check scratch folder could not be removed'),
    );
  }
}

/**
 * Spec endpoint 11: runs the spec's scenarios in order in a scratch folder of the repository (removed
 * afterwards, whatever failed), as `principal`, within `options.timeoutMs`; stores the report (its
 * HTML at `reportUrl`). `ok` when no scenario failed; a skipped scenario (full text disabled, or one
 * whose predecessor failed) does not fail the check by itself.
 */
export async function deepCheck(services: Services, principal: Principal, repository: RepositoryRecord, options: DeepCheckOptions): Promise<DeepCheckResult> {
  const started = performance.now();
  const startedAt = new Date();
  const run = new DeepCheckRun(services, principal, repository, options);
  const listFeatures: DeepCheckFeature[] = [];
  let setupError: string | undefined;
  try {
    await bounded(() => removeAbandonedScratchFolders(run), run.remaining(), 'removing abandoned scratch folders');
  } catch (error) {
    run.services.logger.warn({ err: error, repository: repository.name }, 'abandoned deep-check scratch folders were not removed');
  }
  try {
    await bounded(
      () => {
        const creation = run.track(createFolder(run.scope(), { name: scratchFolderName(run.token, startedAt) }));
        // a creation cut off by the deadline still gets its id, for the clean-up
        void creation.then((scratch) => (run.state.scratchId = scratch.id), () => undefined);
        return creation;
      },
      run.remaining(),
      'creating the scratch folder',
    );
  } catch (error) {
    setupError = `the scratch folder could not be created: ${(error as Error).message}`;
  }
  try {
    for (const [index, feature] of features.entries()) {
      const listScenarios: DeepCheckScenario[] = [];
      for (const scenario of feature.scenarios) listScenarios.push(await runScenario(run, scenario));
      const failed = listScenarios.some((s) => s.status === 'failed');
      listFeatures.push({
        featureName: `${index + 1}. ${feature.title}`,
        featureDescription: feature.description,
        status: failed ? 'failed' : listScenarios.every((s) => s.status === 'skipped') ? 'skipped' : 'passed',
        duration: listScenarios.reduce((sum, s) => sum + s.duration, 0),
        listScenarios,
      });
    }
  } finally {
    const cleanUpError = await cleanUp(run);
    setupError = [setupError, cleanUpError].filter(Boolean).join('; ') || undefined;
  }
  const failures = listFeatures.flatMap((f) => f.listScenarios).filter((s) => s.status === 'failed');
  const ok = failures.length === 0 && !setupError;
  const elapsed = Math.round(performance.now() - started);
  const testName = `Deep health check of repository '${repository.name}'`;
  const testDescription = `the spec's scenarios run in order as ${principal.userName} in a scratch folder of '${repository.name}', removed afterwards`;
  const testTime = testTimeOf(startedAt);
  const id = randomUUID();
  const reportUrl = reportUrlOf(services.config, id);
  const problems = [...failures.map((s) => `${s.scenarioName} (${s.errorMessage})`), ...(setupError ? [setupError] : [])];
  const result: DeepCheckResult = {
    _id: id,
    checkStatus: ok ? 'ok' : 'failed',
    duration: elapsed,
    elapsedTimeInMs: elapsed,
    message: ok ? `repository '${repository.name}': every scenario passed` : `repository '${repository.name}': failed: ${problems.join('; ')}`,
    reportUrl,
    testName,
    testDescription,
    testTime,
    test: { accessId: partitionOf(repository.id), code: ok ? 'success' : 'failure', listFeatures, reportLocation: reportUrl, testDescription, testName, testTime },
  };
  await saveDeepCheckReport(services.orm.em.fork() as EntityManager, repository.id, result);
  return result;
}
