import { setTimeout as sleep } from 'node:timers/promises';
import { finalStates } from '../../src/modules/jobs/index.js';
import { contentUrl, newContent, sql } from './entries.js';
import { call, json, type TestService } from './service.js';

export interface ConvertRequest {
  contentId: string;
  resultAction?: string;
  targetFormat?: string;
  newContentSpecification?: Record<string, unknown>;
}

/** Whose session, in which repository (`C` of the spec; default: the administrator in `default`). */
export interface Caller {
  session?: string;
  base?: string;
}

/** POST C/convert/image as the spec writes it. */
export const convert = (service: TestService, request: ConvertRequest, caller: Caller = {}) =>
  call(
    contentUrl(service, '/convert/image', {}, caller.session, caller.base),
    json('POST', { resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png', ...request }),
  );

/** GET C/jobs/status?jobId=… */
export const jobStatus = (service: TestService, jobId: string, caller: Caller = {}) =>
  call(contentUrl(service, '/jobs/status', { jobId }, caller.session, caller.base));

/** Polls the job status until the job is in a final state (Done, panic, cancelled); gives up after `timeoutMs`. */
export async function finishedJob(service: TestService, jobId: string, caller: Caller = {}, timeoutMs = 90_000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await jobStatus(service, jobId, caller);
    if (status !== 200) throw new Error(`job status: ${status} ${JSON.stringify(body)}`);
    if (finalStates.includes(body.state)) return body;
    if (Date.now() > until) throw new Error(`job ${jobId} still ${body.state} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Uploads `bytes` as a content and starts converting it; answers the content and the job id. */
export async function startConversion(
  service: TestService,
  bytes: Buffer,
  name: string,
  request: Omit<ConvertRequest, 'contentId'> = {},
  caller: Caller = {},
): Promise<{ content: Record<string, any>; jobId: string }> {
  const content = await newContent(service, { name, bytes, session: caller.session, base: caller.base });
  const started = await convert(service, { contentId: content.id, ...request }, caller);
  if (started.status !== 200) throw new Error(`convert: ${started.status} ${JSON.stringify(started.body)}`);
  return { content, jobId: started.body.jobId };
}

/** Uploads `bytes`, converts them and waits for the end; answers the content and the final job status. */
export async function convertBytes(
  service: TestService,
  bytes: Buffer,
  name: string,
  request: Omit<ConvertRequest, 'contentId'> = {},
  caller: Caller = {},
): Promise<{ content: Record<string, any>; job: Record<string, any> }> {
  const { content, jobId } = await startConversion(service, bytes, name, request, caller);
  return { content, job: await finishedJob(service, jobId, caller) };
}

let repositories = 0;

/** A new repository with these limits in its record (as the administration endpoint will set them); its `C`. */
export async function repositoryWithLimits(service: TestService, limits: Record<string, unknown>): Promise<string> {
  const name = `limits${++repositories}`;
  const created = await service.graphql('mutation($n: String!) { createRepository(input: { name: $n }) { id } }', { n: name });
  if (created.errors) throw new Error(JSON.stringify(created.errors));
  await sql(service, 'update repository set limits = ?::jsonb where name = ?', [JSON.stringify(limits), name]);
  return `${service.baseUrl}/api/v1/access.svc.content.${name}/v1`;
}

/** PATCH A/repository/limits of the repository whose `C` is `base` (as an administrator changes them). */
export async function changeLimits(service: TestService, base: string, limits: Record<string, unknown>): Promise<void> {
  const name = base.match(/access\.svc\.content\.([^/]+)\//)![1];
  const params = new URLSearchParams({ repositoryId: `svc.repository.${name}`, sessionId: service.adminSession });
  const patched = await call(`${service.adminBase}/repository/limits?${params}`, json('PATCH', limits));
  if (patched.status !== 200) throw new Error(`limits: ${patched.status} ${JSON.stringify(patched.body)}`);
}
