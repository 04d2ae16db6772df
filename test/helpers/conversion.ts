import { setTimeout as sleep } from 'node:timers/promises';
import { contentUrl, newContent } from './entries.js';
import { call, json, type TestService } from './service.js';

export interface ConvertRequest {
  contentId: string;
  resultAction?: string;
  targetFormat?: string;
  newContentSpecification?: Record<string, unknown>;
}

/** POST C/convert/image as the spec writes it. */
export const convert = (service: TestService, request: ConvertRequest, session = service.adminSession) =>
  call(contentUrl(service, '/convert/image', {}, session), json('POST', { resultAction: 'CONTENT_REPRESENTATION', targetFormat: 'png', ...request }));

/** GET C/jobs/status?jobId=… */
export const jobStatus = (service: TestService, jobId: string, session = service.adminSession) => call(contentUrl(service, '/jobs/status', { jobId }, session));

/** Polls the job status until the job is in a final state (Done, panic, cancelled); gives up after `timeoutMs`. */
export async function finishedJob(service: TestService, jobId: string, timeoutMs = 60_000, session = service.adminSession): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await jobStatus(service, jobId, session);
    if (status !== 200) throw new Error(`job status: ${status} ${JSON.stringify(body)}`);
    if (['Done', 'panic', 'cancelled'].includes(body.state)) return body;
    if (Date.now() > until) throw new Error(`job ${jobId} still ${body.state} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Uploads `bytes` and converts them; answers the final job status. */
export async function convertBytes(
  service: TestService,
  bytes: Buffer,
  name: string,
  request: Omit<ConvertRequest, 'contentId'> = {},
  timeoutMs?: number,
): Promise<{ content: Record<string, any>; job: Record<string, any> }> {
  const content = await newContent(service, { name, bytes });
  const started = await convert(service, { contentId: content.id, ...request });
  if (started.status !== 200) throw new Error(`convert: ${started.status} ${JSON.stringify(started.body)}`);
  return { content, job: await finishedJob(service, started.body.jobId, timeoutMs) };
}
