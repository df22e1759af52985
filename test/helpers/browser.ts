import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (scripts/test.sh installs it); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * The flags keep a headless chromium off the network it would otherwise reach for (updates,
 * sync, QUIC probes): on a machine without internet those connections are refused many at a
 * time and slow everything down.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * One chromium per test file (playwright gives it a fresh temporary profile, removed on close);
 * each test opens its own context (cookies, storage) in it.
 */
export async function launchBrowser(t: { after(fn: () => unknown): void }): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true, timeout: 60_000 });
  t.after(() => browser.close());
  return browser;
}
