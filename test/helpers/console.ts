import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp, type TestMode } from './app.js';
import { launchBrowser } from './browser.js';

/** The viewports the console is checked at. */
export const VIEWPORTS = {
  desktop: { width: 1440, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

export type ViewportName = keyof typeof VIEWPORTS;

/** One service, one chromium and one agent for a console test file (or the screenshot script). */
export interface ConsoleBed {
  app: TestApp;
  browser: Browser;
  agentId: string;
  /** A session with the agent; its id. */
  newSession(title: string): Promise<string>;
  /** Runs `fn` at close, before what the bed itself started. */
  onClose(fn: () => unknown): void;
  close(): Promise<void>;
}

export async function startConsoleBed({
  agent,
  env,
  mode,
}: {
  agent: Record<string, unknown>;
  env?: Record<string, unknown>;
  mode?: TestMode;
}): Promise<ConsoleBed> {
  const closers: (() => unknown)[] = [];
  const t = { after: (fn: () => unknown) => void closers.unshift(fn) };
  const app = await startTestApp(t, { ...(env ? { env } : {}), ...(mode ? { mode } : {}) });
  const browser = await launchBrowser(t);
  const created = await app.request('POST', '/v1/agents', { body: { system_prompt: 'You help.', ...agent } });
  assert.equal(created.status, 201, created.text);
  const agentId: string = created.body.id;
  return {
    app,
    browser,
    agentId,
    async newSession(title) {
      const r = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, title } });
      assert.equal(r.status, 201, r.text);
      return r.body.id;
    },
    onClose: t.after,
    async close() {
      for (const close of closers) await close();
    },
  };
}

/**
 * A fresh browser context at a viewport, signed in to the console at `baseUrl` with `key`.
 * JavaScript errors of the page are collected in `errors` (a test asserts there are none).
 */
export async function consolePage(
  browser: Browser,
  baseUrl: string,
  key: string,
  viewport: ViewportName = 'desktop',
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORTS[viewport] });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${baseUrl}/console/`);
  await page.fill('input[name=key]', key);
  await page.click('form button[type=submit]');
  await page.waitForSelector('[data-testid=who]');
  return { page, errors };
}

/** Shows a view by its hash and waits until its heading is there and nothing is loading. */
export async function showView(page: Page, hash: string, ready = 'h1'): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.waitForSelector(ready);
  // Not waitForFunction: a string predicate is evaluated in the page, which the console's CSP forbids.
  await page.waitForSelector('.loading', { state: 'detached', timeout: 15_000 });
}

/** How far the page scrolls sideways (0 when everything fits the viewport's width). */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate('document.scrollingElement.scrollWidth - innerWidth');
}

/** Where the last transcript entry ends and where the composer starts (viewport coordinates). */
export function lastMessageAndComposer(
  page: Page,
): Promise<{ lastBottom: number; lastTop: number; composerTop: number; viewport: number }> {
  // Strings, not functions, run in the page: the tests' compiler has no DOM types and adds helpers the page lacks.
  return page.evaluate(`(() => {
    const last = [...document.querySelectorAll('[data-testid=transcript] > li')].at(-1).getBoundingClientRect();
    const composer = document.querySelector('[data-testid=composer]').getBoundingClientRect();
    return { lastBottom: last.bottom, lastTop: last.top, composerTop: composer.top, viewport: innerHeight };
  })()`);
}

/** The elements that stick out past the right edge (for the message of a failed overflow check). */
export function overflowCulprits(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
    .filter((el) => !(el.parentElement && el.parentElement.getBoundingClientRect().right > innerWidth + 0.5))
    .slice(0, 5)
    .map((el) => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + ' ' + Math.round(el.getBoundingClientRect().right))`);
}
