import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf, textPage } from '../helpers/pdf.js';
import { adminPassword, startTestService, type TestService } from '../helpers/service.js';
import { openConsoleBrowser, openDetails, stickingOut, type ConsoleBrowser } from './harness.js';

/*
 * The web console (DESIGN §13, docs/console.md) in headless Chromium (Debian's, driven by
 * playwright-core), against the real service under a BASE_PATH: each step as a user does it, each
 * saving a screenshot under test-results/ for a person to look at. The views added later (move, copy,
 * restore, repositories, policies, formats, live thumbnails): console-manage.test.ts.
 */

let service: TestService;
let browser: ConsoleBrowser;
let page: Page;

const shot = (name: string) => browser.shot(name);
const seriousViolations = () => browser.seriousViolations();

/** The raw answer (fetch would decompress): status, headers, body bytes as sent. */
const rawGet = (url: string, encoding: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    request(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });

const folderId = async (name: string) => {
  const home = await service.graphql<{ home: { entries: { id: string; name: string }[] } }>('{ home(repository: "default") { entries { id name } } }');
  return home.data!.home.entries.find((entry) => entry.name === name)!.id;
};

const detailsOf = (name: string) => openDetails(page, name);

describe('web console', () => {
  beforeAll(async () => {
    service = await startTestService({ BASE_PATH: '/content-repo', PREVIEWS_ENABLED: 'true' });
    browser = await openConsoleBrowser(service, 'console');
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('is served at {base_url}/console/: hashed assets cached as immutable, the page revalidated, compressed, under a strict CSP, first load < 300 KB', async () => {
    const redirect = await fetch(`${service.baseUrl}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/content-repo/console/');
    const index = await rawGet(`${service.baseUrl}/console/`, 'gzip, deflate, br');
    expect(index.status).toBe(200);
    expect(index.headers['content-encoding']).toBe('br');
    expect(index.headers['cache-control']).toBe('no-cache');
    const csp = String(index.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self';/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    const html = (await fetch(`${service.baseUrl}/console/`).then((answer) => answer.text())) as string;
    expect(html).not.toMatch(/<script>(?!<)|<script(?![^>]*\bsrc=)[^>]*>|style=/);
    const assets = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    let compressed = index.body.length;
    for (const asset of assets) {
      expect(asset).toMatch(/-[A-Za-z0-9_-]{8}\.(js|css)$/);
      const answer = await rawGet(`${service.baseUrl}/console/${asset}`, 'gzip');
      expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(answer.headers['content-encoding']).toBe('gzip');
      compressed += answer.body.length;
    }
    console.info(`console first load: ${compressed} bytes gzip (page brotli), ${assets.length} assets`);
    expect(compressed).toBeLessThan(300 * 1024);
    expect((await fetch(`${service.baseUrl}/console/assets/nothing-12345678.js`)).status).toBe(404);
  });

  it('signs in with a user name and password; the session is kept in memory only', async () => {
    await page.goto(`${service.baseUrl}/console/`);
    expect(await seriousViolations()).toEqual([]);
    await page.getByLabel('User name').fill(service.config.ADMIN_USER);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/./);
    // by the keyboard alone: the fields in tab order, Enter submits
    await page.getByLabel('User name').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(adminPassword);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([0, 0, '']);
    await shot('1-signed-in');
  });

  it('creates a folder, opens it, uploads by the file input and by drag and drop with progress bars', async () => {
    await page.getByLabel('New folder').fill('Reports');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('button', { name: 'Reports', exact: true }).click();
    await page.locator('[aria-current="location"]', { hasText: 'Reports' }).waitFor();
    await page.getByLabel('Upload files (or drop them here)').setInputFiles({ name: 'zebra-report.pdf', mimeType: 'application/pdf', buffer: buildPdf([textPage(['the quarterly zebra report'])]) });
    await page.getByRole('progressbar', { name: 'Upload of zebra-report.pdf' }).waitFor();
    await page.getByRole('button', { name: 'Details of zebra-report.pdf' }).waitFor();
    // a drop as the browser delivers it: a DataTransfer holding a file
    await page.evaluate(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['%PDF-1.4\nthis is not a PDF at all\n'], 'broken.pdf', { type: 'application/pdf' }));
      document.querySelector('.drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    });
    await page.getByRole('button', { name: 'Details of broken.pdf' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'of 2' }).count()).toBe(1);
    // a change made elsewhere shows without a reload: the folder's contentEvents subscription
    const reports = await folderId('Reports');
    const form = new FormData();
    form.append('file', new Blob(['made elsewhere']), 'elsewhere.txt');
    form.append('name', 'elsewhere.txt');
    form.append('parentId', reports);
    expect((await fetch(`${service.contentBase}/content?sessionId=${service.adminSession}`, { method: 'POST', body: form })).status).toBe(201);
    await page.getByRole('button', { name: 'Details of elsewhere.txt' }).waitFor({ timeout: 10_000 });
    expect(await page.getByRole('status').filter({ hasText: 'of 3' }).count()).toBe(1);
    expect(await seriousViolations()).toEqual([]);
    await shot('2-uploaded');
  });

  it('downloads a content and renames it', async () => {
    await detailsOf('zebra-report.pdf');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('zebra-report.pdf');
    expect((await readFile((await download.path())!)).subarray(0, 5).toString()).toBe('%PDF-');
    await page.getByLabel('New name').fill('zebra-report-2026.pdf');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('button', { name: 'Details of zebra-report-2026.pdf' }).waitFor();
    // tags: added and removed on the entry, shown beside its name
    await page.getByRole('heading', { name: 'zebra-report-2026.pdf', exact: true }).waitFor(); // the details stay open across the rename
    await page.getByLabel('New tag').fill('quarterly');
    await page.getByRole('button', { name: 'Add tag' }).click();
    const zebraRow = page.locator('table.entries tr', { hasText: 'zebra-report-2026.pdf' });
    await expect.poll(() => zebraRow.locator('.tags').textContent().catch(() => '')).toBe('quarterly');
    expect(await seriousViolations()).toEqual([]);
    await shot('3b-tags');
    await page.getByRole('button', { name: 'Remove tag quarterly' }).click();
    await expect.poll(() => zebraRow.locator('.tags').count()).toBe(0);
  });

  it('checks a content out and in with new bytes: the version history shows 2.0 over 1.0', async () => {
    await detailsOf('elsewhere.txt');
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.getByRole('button', { name: 'Check out' }).click();
    await page.getByLabel('New bytes (optional)').setInputFiles({ name: 'elsewhere.txt', mimeType: 'text/plain', buffer: Buffer.from('changed in the console') });
    await page.getByLabel('Comment').fill('second thoughts');
    await page.getByRole('button', { name: 'Check in' }).click();
    await page.getByRole('cell', { name: 'second thoughts' }).waitFor();
    expect(await page.locator('.details tbody tr td:first-child').allTextContents()).toEqual(['2.0', '1.0']);
    expect(await page.getByRole('button', { name: 'Check out' }).count()).toBe(1);
    expect(await seriousViolations()).toEqual([]);
    await shot('3-versions');
  });

  it('searches by properties, by condition (a bad one shows where it went wrong), and by full text with the matches marked', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Name (exact)').fill('zebra-report-2026.pdf');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Details of zebra-report-2026.pdf' }).waitFor();

    await page.getByRole('radio', { name: 'Condition' }).check();
    await page.getByLabel('Condition expression').fill("name = 'a' and or");
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('at position 16');
    expect(await page.locator('pre.caret').textContent()).toBe("name = 'a' and or\n               ^");
    await shot('3-condition-error');
    await page.getByLabel('Condition expression').fill("name like '*.pdf' and resource.fileSize > 100");
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Details of zebra-report-2026.pdf' }).waitFor();

    await shot('4-condition');
    await page.getByRole('radio', { name: 'Full text' }).check();
    await page.getByLabel('Words').fill('zebra');
    // the text is extracted in the background: search again until it is there
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Search', exact: true }).click();
          await page.getByText(/\d+ found/).waitFor();
          return page.locator('table.entries mark').count();
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBeGreaterThan(0);
    expect(await page.locator('table.entries mark').first().textContent()).toBe('zebra');
    expect(await seriousViolations()).toEqual([]);
    await shot('5-full-text');
  });

  it('starts a conversion and sees the job reach Done live in the Jobs list; a broken PDF raises a Conversion Failed notification', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Repository' }).click();
    await page.getByRole('button', { name: 'Reports', exact: true }).click();
    await detailsOf('zebra-report-2026.pdf');
    await page.getByRole('button', { name: 'Convert to images' }).click();
    const started = page.getByRole('status').filter({ hasText: 'Conversion started' });
    const jobId = /job (\S+)/.exec((await started.textContent())!)![1]!;
    await page.getByRole('link', { name: 'Jobs' }).click();
    const row = page.locator(`table.jobs tr[data-job="${jobId}"]`);
    await row.waitFor();
    // no reload, no Refresh: the jobStatus subscription moves it
    await expect.poll(() => row.locator('.state').textContent(), { timeout: 60_000 }).toBe('Done');
    expect(await row.getByRole('progressbar').getAttribute('value')).toBe('100');
    await shot('6-job-done');

    // the page viewer: the conversion's page images, turned by the keyboard; the thumbnail beside the name
    await page.getByRole('link', { name: 'Repository' }).click();
    await page.getByRole('button', { name: 'Reports', exact: true }).click();
    const zebraRow = page.locator('table.entries tr', { hasText: 'zebra-report-2026.pdf' });
    await expect.poll(() => zebraRow.locator('img.thumb').evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0 && image.src.startsWith('blob:')).catch(() => false), { timeout: 30_000 }).toBe(true);
    await detailsOf('zebra-report-2026.pdf');
    await page.getByRole('tab', { name: 'Pages' }).click();
    const viewer = page.getByRole('group', { name: /Pages of zebra-report-2026\.pdf/ });
    const pageImage = viewer.getByRole('img', { name: 'zebra-report-2026.pdf, page 1' });
    await expect.poll(() => pageImage.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).toBe(true);
    expect(await viewer.getByRole('status').textContent()).toMatch(/^Page 1 of 1 \(png\)$/);
    await viewer.focus();
    await page.keyboard.press('ArrowRight');
    expect(await viewer.getByRole('status').textContent()).toMatch(/^Page 1 of 1 \(png\)$/);
    expect(await viewer.getByRole('button', { name: 'Page forward' }).isDisabled()).toBe(true);
    expect(await seriousViolations()).toEqual([]);
    await shot('6b-pages');

    // still in Reports
    await detailsOf('broken.pdf');
    await page.getByRole('button', { name: 'Convert to images' }).click();
    const failure = page.getByRole('alert').filter({ hasText: 'Conversion Failed' });
    await failure.waitFor({ timeout: 60_000 });
    expect(await failure.textContent()).toMatch(/broken\.pdf: \w+ — ./);
    expect(await seriousViolations()).toEqual([]);
    await shot('7-conversion-failed');
    const brokenJob = /job (\S+)/.exec((await page.getByRole('status').filter({ hasText: 'broken.pdf: job' }).textContent())!)![1]!;
    await page.getByRole('link', { name: 'Jobs' }).click();
    await expect.poll(() => page.locator(`table.jobs tr[data-job="${brokenJob}"] .state`).textContent()).toBe('panic');
    expect(await seriousViolations()).toEqual([]);
  });

  it("edits a folder's ACL (own and inherited shown): another user loses access; the audit trail shows the change", async () => {
    const bob = await service.createUserSession('bob');
    const reports = await folderId('Reports');
    const readAsBob = () => service.graphql('query($id: ID!) { folder(repository: "default", id: $id) { name } }', { id: reports }, bob);
    expect((await readAsBob()).data).toEqual({ folder: { name: 'Reports' } });

    await page.getByRole('link', { name: 'Repository' }).click();
    await detailsOf('Reports');
    await page.getByRole('tab', { name: 'Access' }).click();
    await page.getByRole('cell', { name: 'EVERYONE' }).waitFor();
    expect(await page.getByRole('cell', { name: 'own' }).count()).toBe(0);
    await page.getByLabel("Inherit the folder's ACL").uncheck();
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.getByLabel('Principal 1').fill('admin');
    await page.getByLabel('Permission 1').selectOption('all');
    await page.getByRole('button', { name: 'Save ACL' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await page.getByRole('cell', { name: 'EVERYONE' }).count()).toBe(0);
    expect(await seriousViolations()).toEqual([]);
    await shot('8-acl');
    expect((await readAsBob()).errors?.[0]?.extensions).toMatchObject({ reasonCode: 'notFound' });

    await page.getByRole('tab', { name: 'Audit trail' }).click();
    await page.getByRole('cell', { name: 'ACL_CHANGED' }).waitFor();
    expect(await page.getByRole('cell', { name: 'ENTRY_CREATED' }).count()).toBe(1);
    await shot('9-audit');
  });

  it('administration: connection check, the deep-check report, statistics as bar charts, users and groups', { timeout: 180_000 }, async () => {
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('button', { name: 'Check connections' }).click();
    await page.locator('.checks li').first().waitFor();
    await page.getByRole('button', { name: 'Show statistics' }).click();
    await page.getByRole('img', { name: /^Contents by size: < 1 MB \d+/ }).waitFor();
    await page.getByRole('img', { name: /^Representations by status/ }).waitFor();
    // the spec's statistics notifications: the broken PDF's failed conversion is one
    expect(await page.getByRole('list', { name: 'Statistics notifications' }).textContent()).toMatch(/1 conversion job\(s\) failed.*\(to do by hand\)/);
    await page.getByRole('button', { name: 'Run the deep check' }).click();
    const report = page.getByRole('region', { name: 'Deep check report' });
    await report.waitFor({ timeout: 170_000 });
    expect(await report.getByRole('status').textContent()).toMatch(/^ok /);
    expect(await report.locator('ol > li').count()).toBeGreaterThan(3);
    expect(await page.locator('.people li', { hasText: 'bob' }).count()).toBe(1);
    expect(await seriousViolations()).toEqual([]);
    await shot('10-administration');
  });

  it('works at 360 px wide without sideways scrolling, and asked nothing of another origin nor broke its CSP', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const view of ['Repository', 'Search', 'Jobs', 'Administration']) {
      await page.getByRole('link', { name: view }).click();
      expect(await stickingOut(page), view).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), view).toBeLessThanOrEqual(360);
    }
    await page.getByRole('link', { name: 'Repository' }).click();
    await page.getByRole('button', { name: 'Reports', exact: true }).waitFor();
    await shot('11-narrow');
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.cspViolations).toEqual([]);
  });
});
