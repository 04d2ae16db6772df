import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { adminPassword, type TestService } from '../helpers/service.js';

/*
 * The console's browser for its tests (docs/console.md "Tests"): Debian's Chromium driven by
 * playwright-core, a fresh profile, every request to another origin and every CSP violation noted,
 * dialogs accepted; screenshots under test-results/, axe-core's serious and critical violations.
 */

const screenshots = path.join(projectRoot, 'test-results');
const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  /** requests to another origin than the service's (there must be none) */
  foreignRequests: string[];
  /** Content Security Policy violations the page reported (there must be none) */
  cspViolations: string[];
  /** a full-page screenshot test-results/<prefix>-<name>.png */
  shot: (name: string) => Promise<unknown>;
  /** serious and critical accessibility violations axe-core finds on the page as it is */
  seriousViolations: () => Promise<string[]>;
  close: () => Promise<void>;
}

export async function openConsoleBrowser(service: TestService, prefix: string): Promise<ConsoleBrowser> {
  await mkdir(screenshots, { recursive: true });
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'crs-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1100, height: 800 },
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const foreignRequests: string[] = [];
  const cspViolations: string[] = [];
  const origin = new URL(service.baseUrl).origin;
  page.on('request', (sent) => {
    const url = sent.url();
    if (!url.startsWith(origin) && !url.startsWith(origin.replace(/^http/, 'ws')) && !/^(data|blob):/.test(url)) foreignRequests.push(url);
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  page.on('dialog', (dialog) => void dialog.accept());
  return {
    context,
    page,
    foreignRequests,
    cspViolations,
    shot: (name) => page.screenshot({ path: path.join(screenshots, `${prefix}-${name}.png`), fullPage: true }),
    seriousViolations: async () => {
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${await axeSource};0`);
      const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
      return result.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    },
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Signs the administrator in through the sign-in form. */
export async function signInAsAdmin(page: Page, service: TestService): Promise<void> {
  await page.goto(`${service.baseUrl}/console/`);
  await page.getByLabel('User name').fill(service.config.ADMIN_USER);
  await page.getByLabel('Password').fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Opens an entry's details by its row's Details button. */
export async function openDetails(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: `Details of ${name}`, exact: true }).click();
  await expect.poll(() => page.getByRole('heading', { name, exact: true }).count()).toBe(1);
}

/**
 * What sticks out of the window sideways, named for the failure: elements whose right edge passes the
 * window's (tables scroll inside their own box, `.scroll`).
 */
export const stickingOut = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((element) => !element.closest('.scroll') && element.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((element) => `${element.tagName.toLowerCase()}.${element.className} ${Math.round(element.getBoundingClientRect().right)}`),
  );
