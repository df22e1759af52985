// Screenshots of every console view at a desktop (1440×900) and a phone (390×844) size, into
// docs/console/ (linked from README). Boots the embedded service (PGlite) with the built-in
// simulator, seeds an agent, a session with a short conversation, a file and a secret, and
// drives Debian's chromium. Run: node --experimental-async-context-frame --import tsx scripts/console-screenshots.ts
import { mkdirSync } from 'node:fs';
import { consolePage, showView, startConsoleBed, VIEWPORTS, type ViewportName } from '../test/helpers/console.js';
import { FAST_WEBHOOKS, startReceiver } from '../test/webhooks/receiver.js';

const OUT = new URL('../docs/console/', import.meta.url);
const bed = await startConsoleBed({
  mode: 'pglite',
  agent: {
    name: 'Planner',
    description: 'Plans the quarter with the team',
    capabilities: [
      'session_file_system',
      'session_storage',
      'current_time',
      {
        ref: 'mcp',
        config: {
          servers: [
            {
              name: 'tickets',
              url: 'https://tickets.example.com/mcp',
              headers: { Authorization: 'Bearer {{secret:TICKETS_TOKEN}}' },
              allowed_tools: ['search'],
            },
          ],
        },
      },
    ],
  },
  env: FAST_WEBHOOKS,
});
try {
  const { app, browser, agentId } = bed;
  const id = await bed.newSession('Quarterly planning');
  await app.request('POST', `/v1/sessions/${id}/fs/plan/q3.md`, { raw: '# Q3 plan\n', headers: { 'Content-Type': 'text/markdown' } });
  await app.request('PUT', `/v1/sessions/${id}/storage/keys/next-review`, { body: { value: 'Friday' } });
  await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { SEARCH_API_KEY: 'not-shown' } } });
  const say = async (text: string) => {
    await app.request('POST', `/v1/sessions/${id}/messages`, { body: { message: { content: [{ type: 'text', text }] } } });
    await new Promise((r) => setTimeout(r, 2_000));
  };
  await say('@think 3\n@tool get_current_time {}');
  await say('Draft the plan in three bullet points.');
  // A webhook endpoint on a local receiver, with one delivered test-send.
  const rx = await startReceiver({ after: bed.onClose });
  const hook = await app.request('POST', '/v1/webhooks', {
    body: { url: rx.url, description: 'CRM', event_types: ['turn.completed', 'turn.failed'] },
  });
  await app.request('POST', `/v1/webhooks/${hook.body.endpoint.id}/test`);
  await rx.waitFor((all) => all.length > 0);
  // A session whose turn runs while two messages wait (issue 26 item 3): kept busy for each size's shot.
  const busyId = await bed.newSession('Release checklist');
  const sendTo = (text: string, onBusy?: string) =>
    app.request('POST', `/v1/sessions/${busyId}/messages`, {
      body: { message: { content: [{ type: 'text', text }] }, ...(onBusy ? { on_busy: onBusy } : {}) },
    });
  const keepBusy = async () => {
    await sendTo('@tokens 400 delay=50\nWrite the release notes.', 'enqueue');
    await sendTo('Then list the open blockers.', 'enqueue');
    await sendTo('And draft the announcement.', 'enqueue');
  };
  const idleAfterCancel = async () => {
    await app.request('POST', `/v1/sessions/${busyId}/cancel`);
    for (let i = 0; i < 100; i++) {
      const s = (await app.request('GET', `/v1/sessions/${busyId}`)).body;
      if (s.status === 'idle' && s.queued_messages === 0) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const views: [string, string, string][] = [
    ['agents', '#/agents', '[data-testid=agents]'],
    ['agent-editor', `#/agents/${agentId}`, 'input[name=description]'],
    ['agent-import', '#/agents/import', 'h2'],
    ['sessions', '#/sessions', '[data-testid=sessions]'],
    ['chat', `#/sessions/${id}/chat`, '[data-turn-stats]'],
    ['chat-queue', `#/sessions/${busyId}/chat`, '[data-testid=queued-messages] li >> nth=1'],
    ['events', `#/sessions/${id}/events`, '[data-testid=timeline] li'],
    ['storage', `#/sessions/${id}/storage`, '[data-testid=files] li[data-path]'],
    ['admin', '#/admin', '[data-testid=provider-form]'],
    ['webhooks', '#/webhooks', '[data-testid=webhooks] tr[data-endpoint-id]'],
  ];
  mkdirSync(OUT, { recursive: true });
  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    const { page } = await consolePage(browser, app.url, app.adminKey, size);
    for (const [name, hash, ready] of views) {
      if (name === 'chat-queue') await keepBusy();
      await showView(page, hash, ready);
      if (name === 'webhooks') {
        await page.click('[data-testid=webhooks] button:text-is("Deliveries")');
        await page.waitForSelector('[data-testid=webhook-deliveries] tr[data-state=delivered]');
      }
      await page.screenshot({ path: new URL(`${name}-${size}.png`, OUT).pathname });
      // The queued messages run once the turn is cancelled: the next size starts from an idle session.
      if (name === 'chat-queue') await idleAfterCancel();
    }
    await page.context().close();
  }
  console.log(`screenshots written to ${OUT.pathname}`);
} finally {
  await bed.close();
}
