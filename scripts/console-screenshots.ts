// Screenshots of every console view at a desktop (1440×900) and a phone (390×844) size, into
// docs/console/ (linked from README). Boots the embedded service (PGlite) with the built-in
// simulator, seeds an agent, a session with a short conversation, a file and a secret, and
// drives Debian's chromium. Run: node --experimental-async-context-frame --import tsx scripts/console-screenshots.ts
import { mkdirSync } from 'node:fs';
import { startTestApp } from '../test/helpers/app.js';
import { launchBrowser } from '../test/helpers/browser.js';
import { consolePage, showView, VIEWPORTS, type ViewportName } from '../test/helpers/console.js';

const OUT = new URL('../docs/console/', import.meta.url);
const closers: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => void closers.unshift(fn) };

try {
  const app = await startTestApp(t, { mode: 'pglite' });
  const browser = await launchBrowser(t);
  const agent = await app.request('POST', '/v1/agents', {
    body: {
      name: 'Planner',
      description: 'Plans the quarter with the team',
      system_prompt: 'You plan.',
      capabilities: ['session_file_system', 'session_storage', 'current_time'],
    },
  });
  const session = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, title: 'Quarterly planning' } });
  const id = session.body.id as string;
  await app.request('POST', `/v1/sessions/${id}/fs/plan/q3.md`, { raw: '# Q3 plan\n', headers: { 'Content-Type': 'text/markdown' } });
  await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { SEARCH_API_KEY: 'not-shown' } } });
  await app.request('POST', `/v1/sessions/${id}/messages`, {
    body: { message: { content: [{ type: 'text', text: '@think 3\n@tool get_current_time {}' }] } },
  });
  await new Promise((r) => setTimeout(r, 2_000));
  await app.request('POST', `/v1/sessions/${id}/messages`, {
    body: { message: { content: [{ type: 'text', text: 'Draft the plan in three bullet points.' }] } },
  });
  await new Promise((r) => setTimeout(r, 2_000));

  const views: [string, string, string][] = [
    ['agents', '#/agents', '[data-testid=agents]'],
    ['agent-editor', `#/agents/${agent.body.id}`, 'input[name=description]'],
    ['agent-import', '#/agents/import', 'h2'],
    ['sessions', '#/sessions', '[data-testid=sessions]'],
    ['chat', `#/sessions/${id}/chat`, '[data-turn-stats]'],
    ['events', `#/sessions/${id}/events`, '[data-testid=timeline] li'],
    ['storage', `#/sessions/${id}/storage`, '[data-testid=files] li[data-path]'],
    ['admin', '#/admin', '[data-testid=provider-form]'],
  ];
  mkdirSync(OUT, { recursive: true });
  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    const { page } = await consolePage(browser, app.url, app.adminKey, size);
    for (const [name, hash, ready] of views) {
      await showView(page, hash, ready);
      await page.screenshot({ path: new URL(`${name}-${size}.png`, OUT).pathname });
    }
    await page.context().close();
  }
  console.log(`screenshots written to ${OUT.pathname}`);
} finally {
  for (const close of closers) await close();
}
