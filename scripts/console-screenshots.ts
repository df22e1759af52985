// Screenshots of every console view at a desktop (1440×900) and a phone (390×844) size, into
// docs/console/ (linked from README). Boots the embedded service (PGlite) with the built-in
// simulator, seeds an agent with an MCP server, a session with a short conversation, a file and a
// secret, a tool call waiting for approval, a compacted history, a session with queued messages
// and a webhook endpoint whose first delivery attempt fails, and drives Debian's chromium.
// Run: node --experimental-async-context-frame --import tsx scripts/console-screenshots.ts
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { TestApp } from '../test/helpers/app.js';
import { consolePage, showView, startConsoleBed, VIEWPORTS, type ViewportName } from '../test/helpers/console.js';
import { FAST_WEBHOOKS, startReceiver } from '../test/webhooks/receiver.js';

/** One screenshot: its file name stem, the view's hash, what shows it is ready, and what to do before the shot. */
interface Shot {
  name: string;
  hash: string;
  ready: string;
  /** Runs before the view opens. */
  setup?: () => Promise<void>;
  prepare?: (page: Page) => Promise<void>;
  /** Runs after the shot (the next size starts from the same state). */
  reset?: () => Promise<void>;
}

const OUT = new URL('../docs/console/', import.meta.url);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every 200 ms until it is true; throws naming `what` after 30 s. */
async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (await probe()) return;
    await pause(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function sessionApi(app: TestApp, id: string) {
  return {
    send: (text: string, onBusy?: string) =>
      app.request('POST', `/v1/sessions/${id}/messages`, {
        body: { message: { content: [{ type: 'text', text }] }, ...(onBusy ? { on_busy: onBusy } : {}) },
      }),
    async status(): Promise<{ status: string; queued_messages: number }> {
      return (await app.request('GET', `/v1/sessions/${id}`)).body;
    },
    async count(type: string): Promise<number> {
      return (await app.request('GET', `/v1/sessions/${id}/events?types=${type}&limit=1000`)).body.data.length;
    },
    /** Sends each message after the turn of the one before has completed. */
    async converse(texts: string[]): Promise<void> {
      for (const [i, text] of texts.entries()) {
        await this.send(text);
        await until(`turn ${i + 1} of ${id}`, async () => (await this.count('turn.completed')) > i);
      }
    },
  };
}

const MCP_SERVERS = [
  {
    name: 'tickets',
    url: 'https://tickets.example.com/mcp',
    headers: { Authorization: 'Bearer {{secret:TICKETS_TOKEN}}' },
    allowed_tools: ['search', 'get_ticket'],
  },
  { name: 'wiki', url: 'https://wiki.example.com/sse', transport: 'sse' },
];

const bed = await startConsoleBed({
  mode: 'pglite',
  agent: {
    name: 'Planner',
    description: 'Plans the quarter with the team',
    capabilities: ['session_file_system', 'session_storage', 'current_time', { ref: 'mcp', config: { servers: MCP_SERVERS } }],
  },
  env: FAST_WEBHOOKS,
});
try {
  const { app, browser, agentId } = bed;

  // A webhook endpoint on a local receiver that refuses each delivery's first attempt (so each
  // shows a failed attempt and its retry): a test-send, and the turns below add deliveries.
  const rx = await startReceiver({ after: bed.onClose });
  rx.answer = (r) => ({ status: rx.received.filter((x) => x.id === r.id).length === 1 ? 503 : 200 });
  const hook = await app.request('POST', '/v1/webhooks', {
    body: { url: rx.url, description: 'CRM', event_types: ['turn.completed', 'turn.failed'] },
  });
  await app.request('POST', `/v1/webhooks/${hook.body.endpoint.id}/test`);
  await rx.waitFor((all) => all.length >= 2);

  const id = await bed.newSession('Quarterly planning');
  const planning = sessionApi(app, id);
  await app.request('POST', `/v1/sessions/${id}/fs/plan/q3.md`, { raw: '# Q3 plan\n', headers: { 'Content-Type': 'text/markdown' } });
  await app.request('PUT', `/v1/sessions/${id}/storage/keys/next-review`, { body: { value: 'Friday' } });
  await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { SEARCH_API_KEY: 'not-shown' } } });
  await planning.converse(['@think 3\n@tool get_current_time {}', 'Draft the plan in three bullet points.']);

  // A tool call waiting for a person (decision 0101): left pending, so both sizes show it.
  const asker = await app.request('POST', '/v1/agents', {
    body: {
      name: 'Clockwatcher',
      system_prompt: 'You help.',
      capabilities: ['current_time'],
      tool_approvals: [{ tool: 'get_current_*', policy: 'always_ask' }],
    },
  });
  const approvalRes = await app.request('POST', '/v1/sessions', { body: { agent_id: asker.body.id, title: 'Offsite in Tokyo' } });
  const approval = sessionApi(app, approvalRes.body.id);
  await approval.send('What time is it in Tokyo?\n@tool get_current_time {"timezone":"Asia/Tokyo"}');
  await until('the approval prompt', async () => (await approval.status()).status === 'waiting_for_tool_results');

  // A history compacted on demand: its summary replaces the older exchanges in later requests.
  const compactedId = await bed.newSession('Onboarding notes');
  const onboarding = sessionApi(app, compactedId);
  await onboarding.converse(['List the onboarding steps for a new engineer.', 'Add who owns each step.', '@tokens 30']);
  await app.request('POST', `/v1/sessions/${compactedId}/compact`, { body: {} });
  await until('the compaction', async () => (await onboarding.count('session.compacted')) > 0);
  await until('the end of the compaction', async () => (await onboarding.status()).status === 'idle');

  // A session whose turn runs while two messages wait (issue 26 item 3): kept busy for each size's shot.
  const busyId = await bed.newSession('Release checklist');
  const busy = sessionApi(app, busyId);

  const scrollTo = (selector: string) => async (page: Page) => {
    await page.locator(selector).evaluate((el) => el.scrollIntoView({ block: 'start' }));
  };
  const openDeliveries = async (page: Page) => {
    // The button toggles: the previous shot of the same view may have left the panel open.
    if ((await page.locator('[data-testid=webhook-deliveries]').count()) === 0)
      await page.click('[data-testid=webhooks] button:text-is("Deliveries")');
    await page.waitForSelector('[data-testid=webhook-deliveries] tr[data-state=delivered]');
  };
  const shots: Shot[] = [
    { name: 'agents', hash: '#/agents', ready: '[data-testid=agents]' },
    { name: 'agent-editor', hash: `#/agents/${agentId}`, ready: 'input[name=description]' },
    {
      name: 'agent-editor-mcp',
      hash: `#/agents/${agentId}`,
      ready: '[data-testid=mcp-servers] [data-server-index="1"]',
      prepare: scrollTo('[data-testid=mcp-servers]'),
    },
    { name: 'agent-import', hash: '#/agents/import', ready: 'h2' },
    { name: 'sessions', hash: '#/sessions', ready: '[data-testid=sessions]' },
    { name: 'chat', hash: `#/sessions/${id}/chat`, ready: '[data-turn-stats]' },
    { name: 'chat-approval', hash: `#/sessions/${approvalRes.body.id}/chat`, ready: '[data-testid=approval-prompt]' },
    {
      name: 'chat-compacted',
      hash: `#/sessions/${compactedId}/chat`,
      ready: '[data-testid=compacted]',
      // Opened, the summary grows the page under the reader: back to the bottom, its end above the composer.
      async prepare(page) {
        await page.click('[data-testid=compacted] summary');
        await page.evaluate('scrollTo(0, document.scrollingElement.scrollHeight)');
      },
    },
    {
      name: 'chat-queue',
      hash: `#/sessions/${busyId}/chat`,
      ready: '[data-testid=queued-messages] li >> nth=1',
      // Queued before the view opens, so the shot finds the turn running and two waiting.
      async setup() {
        await busy.send('@tokens 400 delay=50\nWrite the release notes.', 'enqueue');
        await busy.send('Then list the open blockers.', 'enqueue');
        await busy.send('And draft the announcement.', 'enqueue');
      },
      async reset() {
        // The queued messages run once the turn is cancelled: the next size starts from an idle session.
        await app.request('POST', `/v1/sessions/${busyId}/cancel`);
        await until('an idle release session', async () => {
          const s = await busy.status();
          return s.status === 'idle' && s.queued_messages === 0;
        });
      },
    },
    { name: 'events', hash: `#/sessions/${id}/events`, ready: '[data-testid=timeline] li' },
    { name: 'storage', hash: `#/sessions/${id}/storage`, ready: '[data-testid=files] li[data-path]' },
    { name: 'admin', hash: '#/admin', ready: '[data-testid=provider-form]' },
    { name: 'webhooks', hash: '#/webhooks', ready: '[data-testid=webhooks] tr[data-endpoint-id]', prepare: openDeliveries },
    {
      name: 'webhook-deliveries',
      hash: '#/webhooks',
      ready: '[data-testid=webhooks] tr[data-endpoint-id]',
      async prepare(page) {
        await openDeliveries(page);
        await page.click('[data-testid=webhook-deliveries] tr[data-delivery-id] >> nth=0 >> button:text-is("Attempts")');
        await page.waitForSelector('[data-testid=webhook-attempts] li >> nth=1');
        await scrollTo('[data-testid=webhook-deliveries]')(page);
      },
    },
  ];
  mkdirSync(OUT, { recursive: true });
  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    const { page, errors } = await consolePage(browser, app.url, app.adminKey, size);
    for (const shot of shots) {
      await shot.setup?.();
      await showView(page, shot.hash, shot.ready);
      await shot.prepare?.(page);
      await page.screenshot({ path: new URL(`${shot.name}-${size}.png`, OUT).pathname });
      await shot.reset?.();
    }
    if (errors.length > 0) throw new Error(`JavaScript errors on the ${size} pages: ${errors.join('; ')}`);
    await page.context().close();
  }
  console.log(`screenshots written to ${OUT.pathname}`);
} finally {
  await bed.close();
}
