import assert from 'node:assert/strict';
import { after, afterEach, before } from 'node:test';
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

export interface ConsoleBedOptions {
  /** The agent's body beyond `system_prompt` (POST /v1/agents). */
  agent: Record<string, unknown>;
  env?: Record<string, unknown>;
  mode?: TestMode;
}

/** Starts the bed; when a step fails, what the earlier steps started is closed (else the test process never exits). */
export async function startConsoleBed({ agent, env, mode }: ConsoleBedOptions): Promise<ConsoleBed> {
  const closers: (() => unknown)[] = [];
  const t = { after: (fn: () => unknown) => void closers.unshift(fn) };
  const close = async () => {
    for (const fn of closers.splice(0)) await fn();
  };
  try {
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
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A describe block's console bed, and the signed-in pages its tests open. */
export interface ConsoleSuite extends Omit<ConsoleBed, 'close'> {
  /**
   * A page signed in at `size` (default desktop) with `key` (default the admin's) at `baseUrl`
   * (default the service's URL); its browser context closes after the test, passed or failed.
   */
  open(size?: ViewportName, opts?: { key?: string; baseUrl?: string }): Promise<{ page: Page; errors: string[] }>;
}

/**
 * One console bed per describe block: started in `before`, closed in `after`, and the pages a
 * test opened with `open` closed after each test. The bed's fields throw until `before` ran;
 * a later `before` hook may seed it, and `onClose` what that hook started.
 */
export function useConsoleBed(options: ConsoleBedOptions): ConsoleSuite {
  let started: ConsoleBed | undefined;
  const pages: Page[] = [];
  before(async () => {
    started = await startConsoleBed(options);
  });
  afterEach(async () => {
    for (const page of pages.splice(0)) await page.context().close();
  });
  after(() => started?.close());
  const bed = (): ConsoleBed => {
    if (!started) throw new Error('the console bed starts in the before hook');
    return started;
  };
  return {
    get app() {
      return bed().app;
    },
    get browser() {
      return bed().browser;
    },
    get agentId() {
      return bed().agentId;
    },
    newSession: (title) => bed().newSession(title),
    onClose: (fn) => bed().onClose(fn),
    async open(size = 'desktop', { key, baseUrl } = {}) {
      const { app, browser } = bed();
      const opened = await consolePage(browser, baseUrl ?? app.url, key ?? app.adminKey, size);
      pages.push(opened.page);
      return opened;
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
