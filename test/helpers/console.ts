import type { Browser, Page } from 'playwright-core';

/** The viewports the console is checked at. */
export const VIEWPORTS = {
  desktop: { width: 1440, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

export type ViewportName = keyof typeof VIEWPORTS;

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
