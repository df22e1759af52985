import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';

/**
 * The web console in a real browser (Debian's chromium through playwright-core) against the
 * embedded service with the llmsim model. One browser and one service for the file; each test
 * signs in in a fresh browser context. Streams cycle every ~1.5 s and stream tokens last 4 s, so
 * the console's resume paths (the browser's Last-Event-ID reconnect, and a new token after a
 * refused reconnect) run during the tests.
 */
describe('web console (chromium)', () => {
  let app: TestApp;
  let browser: Browser;

  const closers: (() => unknown)[] = [];
  before(async () => {
    const t = { after: (fn: () => unknown) => void closers.unshift(fn) };
    app = await startTestApp(t, { env: { SSE_CYCLE_MS: 1500, SSE_CYCLE_QUIET_MS: 200, STREAM_TOKEN_TTL_S: 4 } });
    browser = await launchBrowser(t);
  });
  after(async () => {
    for (const close of closers) await close();
  });

  async function signedInPage(): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('pageerror', (err) => console.log('page error:', err.message));
    await page.goto(`${app.url}/console/`);
    await page.fill('input[name=key]', app.adminKey);
    await page.click('form button[type=submit]');
    await page.waitForSelector('[data-testid=who]');
    return page;
  }

  async function createAgentViaApi(body: Record<string, unknown>): Promise<string> {
    const r = await app.request('POST', '/v1/agents', { body: { name: 'Helper', system_prompt: 'You help.', ...body } });
    assert.equal(r.status, 201, r.text);
    return r.body.id;
  }

  async function createSessionViaApi(agentId: string): Promise<string> {
    const r = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId } });
    assert.equal(r.status, 201, r.text);
    return r.body.id;
  }

  async function serverEvents(sessionId: string): Promise<{ id: string; type: string }[]> {
    const r = await app.request('GET', `/v1/sessions/${sessionId}/events?limit=1000`);
    assert.equal(r.status, 200, r.text);
    return r.body.data;
  }

  /** The session's stored event ids once its last event is `session.idled`. */
  async function idledEventIds(sessionId: string): Promise<string[]> {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await setTimeout(50)) {
      const events = await serverEvents(sessionId);
      if (events.at(-1)?.type === 'session.idled') return events.map((e) => e.id);
    }
    throw new Error('the session did not go idle within 30 s');
  }

  it('signs in with an API key and with email and password; a wrong key is refused', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.url}/console/`);
    await page.fill('input[name=key]', 'not-a-key');
    await page.click('form button[type=submit]');
    await page.waitForSelector('[role=alert]');
    const refusal = (await page.textContent('[role=alert]')) ?? '';
    assert.match(refusal, /API key is not valid/);
    assert.doesNotMatch(refusal, /Unauthorized/);

    await page.fill('input[name=key]', app.adminKey);
    await page.click('form button[type=submit]');
    await page.waitForSelector('[data-testid=who]');
    assert.match((await page.textContent('[data-testid=who]')) ?? '', /admin@localhost \(admin/);
    await page.reload();
    await page.waitForSelector('[data-testid=who]'); // the key is kept for the tab
    await page.click('text=Sign out');
    await page.waitForSelector('input[name=key]');

    const user = await app.request('POST', '/v1/users', {
      body: { email: 'ada@example.com', password: 'correct horse battery', name: 'Ada', role: 'member' },
    });
    assert.equal(user.status, 201, user.text);
    await page.click('text=Email and password');
    await page.fill('input[name=email]', 'ada@example.com');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('form button[type=submit]');
    await page.waitForSelector('[data-testid=who]');
    assert.match((await page.textContent('[data-testid=who]')) ?? '', /ada@example.com \(member/);
    assert.equal(await page.locator('text=Providers & models').count(), 0, 'no admin view for members');
    await context.close();
  });

  it('creates an agent with a capability and a client tool, previews it, and starts a session with it', async () => {
    const page = await signedInPage();
    await page.goto(`${app.url}/console/#/agents/new`);
    await page.waitForSelector('input[value=current_time]');
    await page.fill('input[name=name]', 'Clock');
    await page.fill('textarea[name=system_prompt]', 'You tell the time.');
    await page.check('input[value=current_time]');
    await page.fill(
      'textarea[name=client_tools]',
      JSON.stringify([
        { name: 'ask_user', description: 'Ask the user', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      ]),
    );
    await page.click('text=Preview');
    await page.waitForSelector('[data-testid=agent-preview]');
    const preview = (await page.textContent('[data-testid=agent-preview]')) ?? '';
    assert.match(preview, /get_current_time/);
    assert.match(preview, /ask_user/);
    await page.click('text=Create agent');
    await page.locator('text=Export as Markdown').or(page.locator('[role=alert]')).first().waitFor();
    assert.equal(
      await page.locator('[role=alert]').count(),
      0,
      (await page
        .locator('[role=alert]')
        .first()
        .textContent()
        .catch(() => '')) ?? '',
    );
    assert.match(page.url(), /#\/agents\/[0-9a-f-]{36}$/);
    const agentId = page.url().split('/').at(-1)!;
    const stored = await app.request('GET', `/v1/agents/${agentId}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.name, 'Clock');
    assert.deepEqual(stored.body.capabilities, ['current_time']);
    assert.equal(stored.body.client_tools[0].name, 'ask_user');

    // Edit: the form saves with PATCH.
    await page.waitForSelector('input[name=description]');
    await page.fill('input[name=description]', 'Knows the time');
    await page.click('text=Save');
    await page.waitForSelector('text=Saved.');
    assert.equal((await app.request('GET', `/v1/agents/${agentId}`)).body.description, 'Knows the time');

    await page.goto(`${app.url}/console/#/agents`);
    const row = page.locator(`tr[data-agent-id="${agentId}"]`);
    await row.waitFor();
    await row.locator('text=Chat').click();
    await page.waitForSelector('textarea[name=text]');
    assert.match(page.url(), /#\/sessions\/[0-9a-f-]{36}\/chat$/);
    await page.context().close();
  });

  it('chat: streams the reply, shows thinking, a server tool call with its result, answers a client tool, cancels, and compacts', async () => {
    const agentId = await createAgentViaApi({
      capabilities: ['current_time'],
      client_tools: [
        { name: 'ask_user', description: 'Ask the user', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      ],
    });
    const sessionId = await createSessionViaApi(agentId);
    const page = await signedInPage();
    await page.goto(`${app.url}/console/#/sessions/${sessionId}/chat`);
    await page.waitForSelector('[data-testid=feed-state]:has-text("live")');

    // A server tool call, then the model's streamed summary of its result.
    await send(page, '@think 3\n@tool get_current_time {}');
    const tool = page.locator('li.tool[data-tool-name=get_current_time]');
    await tool.waitFor();
    await page.waitForSelector('li.tool[data-tool-name=get_current_time][data-status=success]');
    await tool.locator('summary').click();
    assert.match((await tool.locator('.result').textContent()) ?? '', /"utc"/);
    const reply = page.locator('li.msg.agent[data-streaming=false] .reply').last();
    await reply.waitFor();
    assert.match((await reply.textContent()) ?? '', /^Received 1 tool result/);
    assert.match((await page.locator('.thinking').first().textContent()) ?? '', /thought1 thought2 thought3/);

    // Deltas render while the reply is still streaming.
    await send(page, '@tokens 200 delay=40'); // 8 s: room to see it half-way on a loaded machine
    const streaming = page.locator('li.msg.agent[data-streaming=true] .reply');
    await waitForStreaming(page);
    const partial = (await streaming.textContent()) ?? '';
    await page.waitForSelector('li.msg.agent[data-streaming=true]', { state: 'detached', timeout: 30_000 });
    const full = (await page.locator('li.msg.agent .reply').last().textContent()) ?? '';
    assert.ok(partial.length > 0 && partial.length < full.length, `partial ${partial.length} of ${full.length}`);
    assert.equal(full.split(' ').length, 200);

    // A client tool call: the prompt appears, the answer resumes the turn.
    await send(page, '@tool ask_user {"q":"favourite colour?"}');
    const prompt = page.locator('[data-testid=client-tool-prompt]');
    await prompt.waitFor();
    assert.match((await prompt.textContent()) ?? '', /favourite colour\?/);
    await prompt.locator('textarea').fill('"blue"');
    await prompt.locator('text=Send result').click();
    await prompt.waitFor({ state: 'detached' });
    await page.waitForSelector('li.msg.agent[data-streaming=false] .reply:has-text("ask_user: blue")');

    // Cancel a running turn.
    await send(page, '@sleep 60000\nnever shown');
    await page.click('text=Cancel turn');
    await page.waitForSelector('li.notice:has-text("Turn cancelled")');
    const types = (await serverEvents(sessionId)).map((e) => e.type);
    assert.ok(types.includes('turn.cancelled'));

    // Compact on demand: the compaction shows in the transcript, its summary folded away.
    await page.click('form.composer button:has-text("Compact")');
    const compacted = page.locator('[data-testid=compacted]');
    await compacted.waitFor();
    assert.match((await compacted.locator('summary').textContent()) ?? '', /^History compacted: \d+ → \d+ tokens$/);
    assert.equal(await compacted.locator('pre.summary').isVisible(), false, 'the summary is collapsed');
    await compacted.locator('summary').click();
    const stored = (await serverEvents(sessionId)).find((e) => e.type === 'session.compacted') as
      | { data?: { summary: string } }
      | undefined;
    assert.ok(stored?.data?.summary, 'session.compacted is stored');
    assert.equal(((await compacted.locator('pre.summary').textContent()) ?? '').trim(), stored.data.summary.trim());
    await page.context().close();
  });

  it('a reload mid-stream resumes without duplicates or gaps (events timeline and chat)', async () => {
    const agentId = await createAgentViaApi({});
    const sessionId = await createSessionViaApi(agentId);
    const page = await signedInPage();
    const sseOpened = () => app.logs.filter((l) => l.includes(`/v1/sessions/${sessionId}/sse`)).length;

    // Events timeline: reload while deltas flow, then let streams cycle and tokens expire.
    await page.goto(`${app.url}/console/#/sessions/${sessionId}/events`);
    await page.waitForSelector('[data-testid=feed-state]:has-text("live")');
    const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { message: { content: [{ type: 'text', text: '@tokens 150 delay=60' }] } },
    });
    assert.equal(sent.status, 201, sent.text);
    await page.waitForSelector('li[data-type="output.message.delta"]');
    await page.reload();
    await page.waitForSelector('li[data-type="turn.completed"]', { timeout: 60_000 });
    const before = sseOpened();
    await page.waitForTimeout(5_000); // at least two stream cycles and one expired token
    assert.ok(sseOpened() >= before + 2, `the stream cycled (${sseOpened() - before} reconnects)`);
    const second = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { message: { content: [{ type: 'text', text: 'after the cycles' }] } },
    });
    assert.equal(second.status, 201);
    await page.locator('li[data-type="turn.completed"]').nth(1).waitFor({ timeout: 30_000 });
    // The session.idled after it is logged, and reaches the page, a moment later (the stream cycles every second here).
    const storedIds = await idledEventIds(sessionId);
    await page.locator(`li[data-event-id="${storedIds.at(-1)}"]`).waitFor({ timeout: 30_000 });
    await page.waitForTimeout(300);
    const rendered = await page.$$eval('[data-testid=timeline] li[data-event-id]', (els) =>
      els.map((el) => el.getAttribute('data-event-id')!),
    );
    assert.equal(new Set(rendered).size, rendered.length, 'no event rendered twice');
    assert.deepEqual(rendered, storedIds, 'every stored event, in order');
    assert.equal(await page.textContent('[data-testid=duplicates]'), '0', 'the service never sent an event twice after a resume');

    // Chat: reload mid-reply; the finished reply is the stored one (no repeated deltas).
    await page.goto(`${app.url}/console/#/sessions/${sessionId}/chat`);
    await page.waitForSelector('[data-testid=feed-state]:has-text("live")');
    await send(page, '@tokens 150 delay=60');
    await waitForStreaming(page);
    await page.reload();
    await page.waitForSelector('li.msg.agent[data-streaming=true]', { timeout: 30_000 }).catch(() => {});
    await page.waitForSelector('li.msg.agent[data-streaming=true]', { state: 'detached', timeout: 60_000 });
    const events = await app.request('GET', `/v1/sessions/${sessionId}/events?types=output.message.completed`);
    const stored = events.body.data.at(-1).data.message.content[0].text;
    const deltas = (await serverEvents(sessionId)).filter((e) => e.type === 'output.message.delta').length;
    assert.ok(deltas > 1, 'the reply came in several deltas');
    assert.equal(await page.locator('li.msg.agent .reply').last().textContent(), stored);
    const ids = await page.$$eval('[data-testid=transcript] [data-event-id]', (els) => els.map((el) => el.getAttribute('data-event-id')!));
    assert.equal(new Set(ids).size, ids.length, 'no message rendered twice');
    assert.equal(ids.length, 6, 'three user messages and three replies');
    await page.context().close();
  });
});

/** Waits until a reply is on screen while it is still streaming (diagnostics when it is not). */
async function waitForStreaming(page: Page): Promise<void> {
  const streaming = page.locator('li.msg.agent[data-streaming=true] .reply');
  await streaming.waitFor().catch(async (err) => {
    const replies = await page
      .locator('li.msg.agent')
      .evaluateAll((els) => els.map((el) => `${el.getAttribute('data-streaming')}:${(el.textContent ?? '').length}`));
    console.log('not seen streaming:', await page.locator('[data-testid=feed-state]').textContent(), replies.join(' '));
    throw err;
  });
}

async function send(page: Page, text: string): Promise<void> {
  await page.waitForSelector('form.composer button[type=submit]:not([disabled])');
  const users = page.locator('[data-testid=transcript] li.msg.user');
  const before = await users.count();
  await page.fill('textarea[name=text]', text);
  await page.click('form.composer button[type=submit]');
  // Sent once the message is back through the stream (its input.message event).
  await users
    .nth(before)
    .waitFor({ timeout: 30_000 })
    .catch(async (err) => {
      throw new Error(
        `the message was not sent: ${
          (await page
            .locator('[role=alert]')
            .first()
            .textContent({ timeout: 1000 })
            .catch(() => '')) ?? ''
        }`,
        { cause: err },
      );
    });
}
