import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf, textPage } from '../helpers/pdf.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { openConsoleBrowser, openDetails, signInAsAdmin, stickingOut, type ConsoleBrowser } from './harness.js';

/*
 * The console's managing views (docs/console.md) in headless Chromium, beside console.test.ts: a
 * thumbnail appearing by itself, a folder's tags, move and copy through the folder picker, delete
 * and restore, check-out cancelled, the page viewer's formats, repositories and their limits,
 * policies and their assignments. Each step checks what the page shows and what the service holds.
 */

let service: TestService;
let browser: ConsoleBrowser;
let page: Page;

interface Listed {
  id: string;
  name: string;
  active?: boolean;
  tags?: string[];
  parent?: { name: string } | null;
}

/** What the service holds, asked as the administrator. */
async function ask<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await service.graphql<T>(query, variables);
  expect(answer.errors).toBeUndefined();
  return answer.data!;
}
const entriesNamed = async (name: string) =>
  (await ask<{ searchByProperties: { entries: Listed[] } }>('query($name: String) { searchByProperties(repository: "default", filter: { name: $name }) { entries { id name tags parent { name } } } }', { name })).searchByProperties.entries;
const rowOf = (name: string) => page.locator('table.entries tr', { has: page.getByRole('button', { name: `Details of ${name}`, exact: true }) });
const openFolder = async (name: string) => {
  await page.getByRole('button', { name, exact: true }).click();
  await page.locator('[aria-current="location"]', { hasText: name }).waitFor();
};
const toRoot = () => page.getByRole('navigation', { name: 'Folder path' }).getByRole('button', { name: 'default', exact: true }).click();

describe('web console: managing views', () => {
  beforeAll(async () => {
    service = await startTestService({ PREVIEWS_ENABLED: 'true' });
    browser = await openConsoleBrowser(service, 'console-manage');
    page = browser.page;
    // a step that waits in vain fails by itself, naming what it waited for, before its test's timeout
    page.setDefaultTimeout(20_000);
    await signInAsAdmin(page, service);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("shows an upload's thumbnail by itself once its preview job made it (its JOB_STATE_CHANGED reaches the folder's subscription)", { timeout: 60_000 }, async () => {
    for (const name of ['Inbox', 'Archive']) {
      await page.getByLabel('New folder').fill(name);
      await page.getByRole('button', { name: 'Create folder' }).click();
      await page.getByRole('button', { name, exact: true }).waitFor();
    }
    await openFolder('Inbox');
    await page.getByLabel('Upload files (or drop them here)').setInputFiles({ name: 'memo.pdf', mimeType: 'application/pdf', buffer: buildPdf([textPage(['a memo about otters'])]) });
    await page.getByRole('button', { name: 'Details of memo.pdf' }).waitFor();
    // no navigation, no reload from here on
    await expect.poll(() => rowOf('memo.pdf').locator('img.thumb').evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0).catch(() => false), { timeout: 45_000 }).toBe(true);
    const [memo] = await entriesNamed('memo.pdf');
    expect((await ask<{ content: { thumbnailUrl: string | null } }>('query($id: ID!) { content(repository: "default", id: $id) { thumbnailUrl } }', { id: memo!.id })).content.thumbnailUrl).toMatch(/\/thumbnail$/);
    await browser.shot('1-thumbnail-live');
  });

  it("edits a folder's tags", async () => {
    await toRoot();
    await openDetails(page, 'Archive');
    await page.getByLabel('New tag').fill('cold');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await expect.poll(() => rowOf('Archive').locator('.tags').textContent().catch(() => '')).toBe('cold');
    expect((await entriesNamed('Archive'))[0]!.tags).toEqual(['cold']);
    await page.getByLabel('New tag').fill('shelf');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await expect.poll(() => rowOf('Archive').locator('.tags').textContent().catch(() => '')).toBe('cold, shelf');
    await page.getByRole('button', { name: 'Remove tag cold' }).click();
    await expect.poll(async () => (await entriesNamed('Archive'))[0]!.tags).toEqual(['shelf']);
    expect(await browser.seriousViolations()).toEqual([]);
    await browser.shot('2-folder-tags');
  });

  it('copies and moves a content and moves a folder through the folder picker', async () => {
    await openFolder('Inbox');
    await openDetails(page, 'memo.pdf');
    const target = page.getByLabel('Target folder');
    await expect.poll(() => target.locator('option').allTextContents()).toEqual(['/ (root)', '/Archive', '/Inbox']);
    await target.selectOption({ label: '/Archive' });
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Copy: to /Archive' }).waitFor();
    await expect.poll(async () => (await entriesNamed('memo.pdf')).map((entry) => entry.parent?.name).sort()).toEqual(['Archive', 'Inbox']);
    expect(await browser.seriousViolations()).toEqual([]);
    await browser.shot('3-copied');

    await target.selectOption({ label: '/ (root)' });
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Details of memo.pdf' }).count()).toBe(0);
    expect((await entriesNamed('memo.pdf')).map((entry) => entry.parent?.name ?? '/').sort()).toEqual(['/', 'Archive']);

    // a folder: not into itself, nor below it
    await toRoot();
    await openDetails(page, 'Inbox');
    await expect.poll(() => page.getByLabel('Target folder').locator('option').allTextContents()).toEqual(['/ (root)', '/Archive']);
    await page.getByLabel('Target folder').selectOption({ label: '/Archive' });
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Inbox', exact: true }).count()).toBe(0);
    expect((await entriesNamed('Inbox'))[0]!.parent?.name).toBe('Archive');
  });

  it('deletes a content and restores it from Deleted contents', async () => {
    await openDetails(page, 'memo.pdf');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Details of memo.pdf' }).count()).toBe(0);
    const deleted = await ask<{ searchByCondition: { entries: Listed[] } }>('{ searchByCondition(repository: "default", condition: "active = false") { entries { id name active } } }');
    expect(deleted.searchByCondition.entries).toMatchObject([{ name: 'memo.pdf', active: false }]);

    await page.getByRole('button', { name: 'Show deleted contents' }).click();
    const trash = page.locator('table.deleted');
    await trash.getByRole('cell', { name: 'memo.pdf', exact: true }).waitFor();
    expect(await browser.seriousViolations()).toEqual([]);
    await browser.shot('4-deleted');
    await page.getByRole('button', { name: 'Restore memo.pdf' }).click();
    await page.getByRole('status').filter({ hasText: 'memo.pdf is back in the root' }).waitFor();
    await page.getByRole('button', { name: 'Details of memo.pdf' }).waitFor();
    await trash.getByRole('cell', { name: 'Nothing deleted.' }).waitFor();
    expect((await ask<{ content: { active: boolean } }>('query($id: ID!) { content(repository: "default", id: $id) { active } }', { id: deleted.searchByCondition.entries[0]!.id })).content.active).toBe(true);
    await page.getByRole('button', { name: 'Hide deleted contents' }).click();
  });

  it('checks a content out and cancels the check-out: the lock goes, no version is added', async () => {
    await openDetails(page, 'memo.pdf');
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.getByRole('button', { name: 'Check out' }).click();
    await page.getByText('Checked out by admin.').waitFor();
    const [memo] = (await entriesNamed('memo.pdf')).filter((entry) => !entry.parent);
    const lock = async () => (await ask<{ content: { lockedBy: string | null } }>('query($id: ID!) { content(repository: "default", id: $id) { lockedBy } }', { id: memo!.id })).content.lockedBy;
    expect(await lock()).toBe('admin');
    await browser.shot('5-checked-out');
    await page.getByRole('button', { name: 'Cancel check-out' }).click();
    await page.getByRole('button', { name: 'Check out' }).waitFor();
    expect(await lock()).toBeNull();
    expect(await page.locator('.details tbody tr td:first-child').allTextContents()).toEqual(['1.0']);
  });

  it("lets the page viewer choose among the formats a content's conversions drew", { timeout: 120_000 }, async () => {
    await page.getByRole('tab', { name: 'Actions' }).click();
    for (const format of ['png', 'jpeg']) {
      await page.getByLabel('Image format').selectOption(format);
      await page.getByRole('button', { name: 'Convert to images' }).click();
      await page.getByRole('status').filter({ hasText: 'Conversion: started' }).waitFor();
    }
    const [memo] = (await entriesNamed('memo.pdf')).filter((entry) => !entry.parent);
    const formats = async () =>
      (await ask<{ representations: { entries: { format: string }[] } }>('query($id: ID!) { representations(repository: "default", contentId: $id) { entries { format } } }', { id: memo!.id })).representations.entries.map((each) => each.format).sort();
    await expect.poll(formats, { timeout: 100_000, interval: 1000 }).toEqual(['jpeg', 'png', 'thumbnail']);
    await page.getByRole('tab', { name: 'Pages' }).click();
    const viewer = page.getByRole('group', { name: /Pages of memo\.pdf/ });
    const format = viewer.getByRole('combobox', { name: /^Format/ });
    await expect.poll(() => format.locator('option').allTextContents()).toEqual(['jpeg', 'png']);
    await format.selectOption('png');
    expect(await viewer.getByRole('status').textContent()).toBe('Page 1 of 1 (png)');
    await format.selectOption('jpeg');
    expect(await viewer.getByRole('status').textContent()).toBe('Page 1 of 1 (jpeg)');
    const image = viewer.getByRole('img', { name: 'memo.pdf, page 1' });
    await expect.poll(() => image.evaluate((shown: HTMLImageElement) => shown.complete && shown.naturalWidth > 0)).toBe(true);
    expect(await browser.seriousViolations()).toEqual([]);
    await browser.shot('6-page-formats');
  });

  it('administration: creates a repository and edits its limits', async () => {
    await page.getByRole('link', { name: 'Administration' }).click();
    const card = page.getByRole('region', { name: 'Repositories' });
    await card.getByRole('cell', { name: 'default', exact: true }).waitFor();
    await card.getByLabel('Repository name').fill('scans');
    await card.getByRole('button', { name: 'Create repository' }).click();
    await card.getByRole('cell', { name: 'scans', exact: true }).waitFor();
    await card.getByRole('button', { name: 'Edit limits of scans' }).click();
    const limits = card.getByRole('form', { name: 'Limits of scans' });
    await limits.getByLabel('Share of the PDF object limits').selectOption('LOW');
    await limits.getByLabel('Over that share').selectOption('REPLACE');
    await limits.getByLabel('Input files a job').fill('3');
    await limits.getByLabel('Full-text search').uncheck();
    expect(await browser.seriousViolations()).toEqual([]);
    await browser.shot('7-repository-limits');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    const row = card.locator('tr', { has: page.getByRole('cell', { name: 'scans', exact: true }) });
    await expect.poll(() => row.textContent()).toContain('PDF objects LOW, over it: REPLACE, ≤ 3 files a job');
    expect(await row.getByRole('cell', { name: 'off', exact: true }).count()).toBe(1);
    const { repository } = await ask<{ repository: { fullTextEnabled: boolean; limits: Record<string, unknown> } }>('{ repository(name: "scans") { fullTextEnabled limits { conversionLimit conversionStrategy maxInputFileSize maxNumberOfInputFiles maxTotalInputFileSize } } }');
    expect(repository).toEqual({ fullTextEnabled: false, limits: { conversionLimit: 'LOW', conversionStrategy: 'REPLACE', maxInputFileSize: null, maxNumberOfInputFiles: 3, maxTotalInputFileSize: null } });
  });

  it('administration: creates policies, assigns one to a folder and takes it off again', { timeout: 90_000 }, async () => {
    const card = page.getByRole('region', { name: 'Policies' });
    const form = card.getByRole('form', { name: 'New policy' });
    await form.getByLabel('Policy name').fill('Invoices by default');
    await form.getByRole('textbox', { name: 'Default type' }).fill('invoice');
    // the technical name defaults to the name, which has spaces here: the service refuses it, the console says why
    await form.getByRole('button', { name: 'Create policy' }).click();
    await page.getByRole('alert').filter({ hasText: 'New policy failed' }).getByText(/give technicalName/).waitFor();
    await page.getByRole('button', { name: 'Dismiss: New policy failed' }).click();
    await form.getByLabel('Technical name').fill('invoices-default');
    await form.getByRole('button', { name: 'Create policy' }).click();
    await card.getByRole('cell', { name: 'new contents are of type invoice' }).waitFor();
    await form.getByLabel('Kind').selectOption('INHERITANCE');
    await form.getByLabel('Policy name').fill('Hand down tags');
    await form.getByLabel('Technical name').fill('hand-down-tags');
    for (const flag of ['common properties', 'policies', 'ACL', 'classification']) await form.getByLabel(flag, { exact: true }).uncheck();
    await form.getByRole('button', { name: 'Create policy' }).click();
    await card.getByRole('cell', { name: 'hands down tags', exact: true }).waitFor();

    await card.getByRole('combobox', { name: /^Policy/ }).selectOption({ label: 'Invoices by default' });
    await card.getByRole('combobox', { name: /^Folder/ }).selectOption({ label: '/Archive/Inbox' });
    await card.getByRole('button', { name: 'Assign' }).click();
    const unassign = card.getByRole('button', { name: 'Unassign Invoices by default from /Archive/Inbox' });
    await unassign.waitFor();
    const assignments = async () => (await ask<{ policyAssignments: { folderName: string }[] }>('{ policyAssignments(repositoryId: "svc.repository.default") { folderName } }')).policyAssignments;
    expect(await assignments()).toEqual([{ folderName: 'Inbox' }]);
    expect(await browser.seriousViolations()).toEqual([]);
    await browser.shot('8-policies');

    await unassign.click();
    await expect.poll(() => unassign.count()).toBe(0);
    expect(await assignments()).toEqual([]);
    const { policies } = await ask<{ policies: { name: string; kind: string; fields: Record<string, unknown> }[] }>('{ policies { name kind fields } }');
    expect(policies.map((policy) => [policy.name, policy.kind])).toEqual([
      ['Hand down tags', 'INHERITANCE'],
      ['Invoices by default', 'DEFAULT_TYPE'],
    ]);
    expect(policies[0]!.fields).toMatchObject({ inheritTags: true, inheritPolicies: false });
  });

  it('keeps the new views within 360 px, asked nothing of another origin nor broke its CSP', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const view of ['Administration', 'Repository']) {
      await page.getByRole('link', { name: view }).click();
      if (view === 'Repository') await page.getByRole('button', { name: 'Show deleted contents' }).click();
      expect(await stickingOut(page), view).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), view).toBeLessThanOrEqual(360);
      await browser.shot(`9-narrow-${view.toLowerCase()}`);
    }
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.cspViolations).toEqual([]);
  });

  it('offers no Administration to a user who is not an administrator (nor does the API answer its queries)', async () => {
    const carol = await service.createUserSession('carol');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('User name').fill('carol');
    await page.getByLabel('Password').fill('carol-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents()).toEqual(['Repository', 'Search', 'Jobs']);
    // asked for by its address (no reload: that would sign out)
    await page.evaluate(() => (location.hash = '#admin'));
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Administration' }).count()).toBe(0);
    expect((await service.graphql('{ policyAssignments { folderId } }', {}, carol)).errors).toHaveLength(1);
  });
});
