import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import { illegalArguments, notFound } from '../../errors.js';
import type { DeepCheckFeature, DeepCheckResult } from './deep-check.js';

/** Reports kept per repository: the newest ones; saving another removes the oldest beyond these. */
export const reportsKeptPerRepository = 20;

const reportIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The relative URL of a report (DESIGN §4 `GET A/repository/deep-check/report/{id}`): absolute in its
 * path, so that it resolves the same against the deep check's URL and against `A/jobs/status`. Like
 * every endpoint it takes the caller's `sessionId` (or `Authorization: Bearer`); the URL holds none.
 */
export const reportUrlOf = (config: Config, reportId: string) => `${config.BASE_PATH}/api/v1/access.svc.admin/v1/repository/deep-check/report/${reportId}`;

/** Stores a run's result (the report is rendered from it when read) and drops the repository's oldest beyond the kept number. */
export async function saveDeepCheckReport(em: EntityManager, repositoryId: string, result: DeepCheckResult): Promise<void> {
  await em.execute(
    `with saved as (
       insert into deep_check_report (id, repository_id, check_status, result) values (?, ?, ?, ?::jsonb) returning id)
     delete from deep_check_report where repository_id = ? and id not in (
       select id from deep_check_report where repository_id = ? order by created_at desc, id desc limit ?)`,
    [result._id, repositoryId, result.checkStatus, JSON.stringify(result), repositoryId, repositoryId, reportsKeptPerRepository - 1],
    'run',
  );
}

export async function findDeepCheckReport(em: EntityManager, reportId: string): Promise<DeepCheckResult> {
  if (!reportIdPattern.test(reportId)) throw illegalArguments(`report id '${reportId}' is not valid`);
  const [row] = await em.execute<{ result: DeepCheckResult }[]>('select result from deep_check_report where id = ?', [reportId]);
  if (!row) throw notFound(`deep check report '${reportId}' not found (the newest ${reportsKeptPerRepository} of each repository are kept)`);
  return row.result;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const styles = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
.summary td { padding: .1em 1em .1em 0; }
table.features { border-collapse: collapse; width: 100%; margin-top: 1.5em; }
table.features th, table.features td { border: 1px solid #ccc; padding: .35em .6em; text-align: left; vertical-align: top; }
tr.feature th { background: #f0f0f0; }
.passed { color: #1a7f37; font-weight: 600; }
.failed { color: #cf222e; font-weight: 600; }
.skipped { color: #9a6700; font-weight: 600; }
.ok { color: #1a7f37; } .error { white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: .9em; }
`;

function featureRows(feature: DeepCheckFeature): string {
  const head = `<tr class="feature"><th colspan="2">${escapeHtml(feature.featureName)} <small>${escapeHtml(feature.featureDescription)}</small></th><th class="${feature.status}">${feature.status}</th><th>${feature.duration} ms</th><th></th></tr>`;
  const scenarios = feature.listScenarios.map(
    (s) =>
      `<tr><td>${escapeHtml(s.scenarioName)}</td><td>${escapeHtml(s.scenarioDescription)}</td><td class="${s.status}">${s.status}</td><td>${s.duration} ms</td><td class="error">${escapeHtml(s.errorMessage ?? '')}</td></tr>`,
  );
  return [head, ...scenarios].join('\n');
}

/** The report as a page a browser shows on its own: inline styles, no scripts, no external resources. */
export function renderDeepCheckReport(result: DeepCheckResult): string {
  const status = result.checkStatus === 'ok' ? 'ok' : 'failed';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(result.testName)} — ${escapeHtml(result.testTime)}</title>
<style>${styles}</style>
</head>
<body>
<h1>${escapeHtml(result.testName)}</h1>
<p>${escapeHtml(result.testDescription)}</p>
<table class="summary">
<tr><td>Check status</td><td class="${status === 'ok' ? 'ok' : 'failed'}">${escapeHtml(result.checkStatus)}</td></tr>
<tr><td>Message</td><td>${escapeHtml(result.message)}</td></tr>
<tr><td>Test time (UTC)</td><td>${escapeHtml(result.testTime)}</td></tr>
<tr><td>Duration</td><td>${result.duration} ms</td></tr>
<tr><td>Access</td><td>${escapeHtml(result.test.accessId)}</td></tr>
<tr><td>Report id</td><td>${escapeHtml(result._id)}</td></tr>
</table>
<table class="features">
<tr><th>Scenario</th><th>Description</th><th>Result</th><th>Duration</th><th>Error</th></tr>
${result.test.listFeatures.map(featureRows).join('\n')}
</table>
</body>
</html>
`;
}
