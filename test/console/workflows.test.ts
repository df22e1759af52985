import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { showView, sidewaysOverflow, useConsoleBed } from '../helpers/console.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * What a team meets beyond the happy path, in chromium: a stopped service (through a TCP proxy
 * the test cuts, so the shared service keeps running), an unknown session, slow answers, refused
 * input; and the working tools: files with sizes, upload and preview, secrets, providers and a
 * model chosen per message. Streams cycle every 1.5 s, so the spec's reconnect path runs too.
 */
describe('console workflows (chromium)', () => {
  const bed = useConsoleBed({
    agent: { name: 'Keeper', capabilities: ['session_file_system', 'session_storage'] },
    env: { SSE_CYCLE_MS: 1500, SSE_CYCLE_QUIET_MS: 200 },
  });
  let app: TestApp;
  let proxy: TcpProxy;
  let base: string;

  before(async () => {
    ({ app } = bed);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(app.url).port) });
    bed.onClose(() => proxy.close());
    base = `http://127.0.0.1:${proxy.port}`;
  });

  const newSession = () => bed.newSession('Workflows');

  /** Times (ms) of the page's requests whose URL contains `part`. */
  function requestsTo(page: Page, part: string): { at: number; url: string; lastEventId?: string }[] {
    const seen: { at: number; url: string; lastEventId?: string }[] = [];
    page.on('request', async (r) => {
      if (!r.url().includes(part)) return;
      const entry: { at: number; url: string; lastEventId?: string } = { at: Date.now(), url: r.url() };
      seen.push(entry);
      entry.lastEventId = (await r.allHeaders().catch(() => ({}) as Record<string, string>))['last-event-id'];
    });
    return seen;
  }

  it('a stopped service: the state shows, reconnects back off with jitter (not every 100 ms), the send error is in view, and the stream comes back', async () => {
    const sessionId = await newSession();
    const { page, errors } = await bed.open('phone', { baseUrl: base });
    const calls = requestsTo(page, `/v1/sessions/${sessionId}/`);
    await showView(page, `#/sessions/${sessionId}/chat`, '[data-testid=feed-state][data-state=live]');

    await proxy.cut();
    const cutAt = Date.now();
    await page.waitForTimeout(6_000);
    const attempts = calls.filter((c) => c.at >= cutAt && /\/(sse|stream-token|events)\b/.test(c.url)).length;
    assert.ok(attempts >= 2 && attempts <= 6, `reconnect attempts in 6 s with the service stopped: ${attempts}`);
    // Each retry shows 'connecting' until its attempt fails: a single read could land inside one.
    await page.waitForSelector('[data-testid=feed-state][data-state=offline]', { timeout: 5_000 });
    assert.match((await page.textContent('[data-testid=feed-state]')) ?? '', /Service unreachable — retrying/);

    await page.fill('textarea[name=text]', 'are you there?');
    await page.click('form.composer button[type=submit]');
    const alert = page.locator('[data-testid=composer] [role=alert]');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    assert.match(text, /Cannot reach the service/);
    assert.doesNotMatch(text, /Failed to fetch|TypeError/);
    const box = (await alert.boundingBox())!;
    assert.ok(box.y >= 0 && box.y + box.height <= 844, `the send error is on screen (${JSON.stringify(box)})`);

    await proxy.restore();
    await page.waitForSelector('[data-testid=feed-state][data-state=live]', { timeout: 25_000 });
    const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { message: { content: [{ type: 'text', text: 'back again' }] } },
    });
    assert.equal(sent.status, 201, sent.text);
    await page.waitForSelector('li.msg.user:has-text("back again")', { timeout: 20_000 });
    assert.deepEqual(errors, []);
  });

  it("live streams keep the spec's hint: after `disconnecting` the browser itself reconnects with Last-Event-ID, on the same token", async () => {
    const sessionId = await newSession();
    const { page } = await bed.open('desktop');
    const sse = requestsTo(page, `/v1/sessions/${sessionId}/sse`);
    const tokens = requestsTo(page, `/v1/sessions/${sessionId}/stream-token`);
    await showView(page, `#/sessions/${sessionId}/events`, '[data-testid=feed-state][data-state=live]');
    const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { message: { content: [{ type: 'text', text: 'hi' }] } },
    });
    assert.equal(sent.status, 201, sent.text);
    await page.waitForSelector('li[data-type="turn.completed"]');
    await page.waitForTimeout(4_000); // two or more stream cycles
    assert.ok(sse.length >= 3, `the stream cycled (${sse.length} opens)`);
    assert.ok(
      sse.some((r) => r.lastEventId),
      'a reconnect carried Last-Event-ID',
    );
    assert.ok(tokens.length < sse.length, `planned reconnects reuse the stream (${tokens.length} tokens for ${sse.length} opens)`);
    assert.equal(await page.textContent('[data-testid=duplicates]'), '0');
  });

  it('an unknown session says "not found" once in every session view and does not retry the 404', async () => {
    const { page, errors } = await bed.open('desktop');
    const missing = randomUUID();
    const calls = requestsTo(page, `/v1/sessions/${missing}`);
    for (const view of ['chat', 'events', 'storage']) {
      await showView(page, `#/sessions/${missing}/${view}`, '[data-testid=not-found]');
      assert.match((await page.textContent('[data-testid=not-found]')) ?? '', /^Session not found\./);
      assert.equal(await page.locator('[role=alert]').count(), 1, `${view}: one message, not one per panel`);
      assert.equal(await page.locator('text=/Not found$|error:/').count(), 0, `${view}: no raw error`);
    }
    await page.waitForTimeout(3_000);
    const feedCalls = calls.filter((c) => /\/(events|stream-token|sse)\b/.test(c.url)).length;
    assert.ok(feedCalls <= 2, `the feed's 404 is not retried (${feedCalls} calls in two views)`);
    assert.deepEqual(errors, []);
  });

  it('slow answers show a loading state; refused input and results read as sentences (no status words, patterns or JSON)', async () => {
    const signIn = await bed.browser.newPage({ viewport: { width: 390, height: 844 } });
    await signIn.goto(`${app.url}/console/`);
    await signIn.waitForSelector('h1:has-text("Sign in")');
    assert.ok((await sidewaysOverflow(signIn)) <= 0, 'the sign-in form fits a phone');
    assert.match(await signIn.title(), /Sign in/);
    await signIn.context().close();

    const sessionId = await newSession();
    const { page } = await bed.open('desktop');
    await page.route('**/v1/sessions?**', async (route) => {
      await new Promise((r) => setTimeout(r, 1_500));
      await route.continue();
    });
    await page.evaluate("location.hash = '#/sessions'");
    await page.waitForSelector('.loading[role=status]:has-text("Loading sessions")');
    await page.waitForSelector('[data-testid=sessions]');
    assert.equal(await page.locator('.loading').count(), 0, 'the loading line goes once the list is there');

    await showView(page, `#/sessions/${sessionId}/storage`, '[data-testid=secret-form]');
    await page.fill('[data-testid=secret-form] input[name=name]', 'not a valid name!');
    await page.fill('[data-testid=secret-form] input[name=value]', 'v');
    await page.click('[data-testid=secret-form] button[type=submit]');
    const refused = (await page.locator('[data-testid=secrets] [role=alert]').textContent()) ?? '';
    assert.match(refused, /^Not saved: /);
    assert.doesNotMatch(refused, /pattern|\^|\$|Invalid request|\{/, refused);

    const provider = await app.request('POST', '/v1/llm-providers', { body: { name: 'Sim', provider_type: 'llmsim', api_key: 'unused' } });
    assert.equal(provider.status, 201, provider.text);
    await showView(page, '#/admin', `tr[data-provider-id="${provider.body.id}"]`);
    await page.locator(`tr[data-provider-id="${provider.body.id}"] button:has-text("Sync models")`).click();
    const result = page.locator('p.ok[role=status]');
    await result.locator('text=/^Sim: /').waitFor();
    assert.doesNotMatch((await result.textContent()) ?? '', /[{}"]/, 'no raw JSON');
  });

  it('files show sizes and folder marks, upload and preview; KV entries are set, shown and deleted; a secret is saved without its value showing and deleted; an admin adds a provider and a model, and a message uses it', async () => {
    const sessionId = await newSession();
    const folderFile = await app.request('POST', `/v1/sessions/${sessionId}/fs/docs/plan.md`, {
      raw: '# Plan\n',
      headers: { 'Content-Type': 'text/markdown' },
    });
    assert.equal(folderFile.status, 201, folderFile.text);
    const { page, errors } = await bed.open('phone');
    await showView(page, `#/sessions/${sessionId}/storage`, '[data-testid=files] li[data-path="/docs"]');
    assert.equal(await page.getAttribute('[data-testid=files] li[data-path="/docs"]', 'data-directory'), 'true');
    assert.match((await page.textContent('[data-testid=files] li[data-path="/docs"]')) ?? '', /\/docs\//, 'a folder ends in /');
    assert.match((await page.textContent('[data-testid=files] li[data-path="/docs/plan.md"]')) ?? '', /7 B/);

    await page.setInputFiles('[data-testid=files] input[type=file]', {
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('x'.repeat(2048)),
    });
    const uploaded = page.locator('[data-testid=files] li[data-path="/notes.txt"]');
    await uploaded.waitFor();
    assert.match((await uploaded.textContent()) ?? '', /2\.0 KB/);
    await uploaded.locator('button').click();
    await page.waitForSelector('[data-testid=file-preview] pre');
    assert.equal(((await page.textContent('[data-testid=file-preview] pre')) ?? '').length, 2048);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await page.setInputFiles('[data-testid=files] input[type=file]', {
      name: 'dot.png',
      mimeType: 'image/png',
      buffer: Buffer.from(png, 'base64'),
    });
    await page.locator('[data-testid=files] li[data-path="/dot.png"] button').click();
    const img = page.locator('[data-testid=file-preview] img');
    await img.waitFor();
    assert.equal(
      await img.evaluate((el) => (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth),
      1,
      'the image is shown',
    );
    const stored = await app.request('GET', `/v1/sessions/${sessionId}/fs/notes.txt`);
    assert.equal(stored.status, 200);
    assert.equal(stored.text, 'x'.repeat(2048));

    await page.fill('[data-testid=secret-form] input[name=name]', 'SEARCH_API_KEY');
    await page.fill('[data-testid=secret-form] input[name=value]', 'sk-console-secret-value');
    await page.fill('[data-testid=secret-form] input[name=allowed_hosts]', 'api.example.com');
    await page.click('[data-testid=secret-form] button[type=submit]');
    await page.waitForSelector('[data-testid=secrets] li:has-text("SEARCH_API_KEY")');
    assert.doesNotMatch((await page.content()) ?? '', /sk-console-secret-value/, 'the value is not on the page');
    const secrets = await app.request('GET', `/v1/sessions/${sessionId}/storage/secrets`);
    assert.deepEqual(
      secrets.body.data.map((x: { name: string; allowed_hosts: string[] }) => [x.name, x.allowed_hosts]),
      [['SEARCH_API_KEY', ['api.example.com']]],
    );
    const secretRow = page.locator('[data-testid=secrets] li[data-name="SEARCH_API_KEY"]');
    const gap = await secretRow.evaluate((li) => {
      const button = li.querySelector('button')!;
      return button.getBoundingClientRect().left - button.previousElementSibling!.getBoundingClientRect().right;
    });
    assert.ok(gap >= 4, `the secret's delete button stands apart from its name and hosts (${gap} px)`);
    page.once('dialog', (d) => void d.accept());
    await secretRow.locator('button:has-text("delete")').click();
    await secretRow.waitFor({ state: 'detached' });
    assert.equal((await app.request('GET', `/v1/sessions/${sessionId}/storage/secrets`)).body.total, 0);

    await page.fill('[data-testid=kv-form] input[name=key]', 'plan/step one');
    await page.fill('[data-testid=kv-form] textarea[name=value]', 'draft the outline');
    await page.click('[data-testid=kv-form] button[type=submit]');
    const entry = page.locator('[data-testid=kv] li[data-key="plan/step one"]');
    await entry.waitFor();
    assert.equal(await entry.locator('.value').count(), 0, 'values only when asked');
    await page.check('[data-testid=kv] input[type=checkbox]');
    await entry.locator('.value:has-text("draft the outline")').waitFor();
    const kv = await app.request('GET', `/v1/sessions/${sessionId}/storage/keys?include_values=true`);
    assert.deepEqual(
      kv.body.data.map((e: { key: string; value: string }) => [e.key, e.value]),
      [['plan/step one', 'draft the outline']],
    );
    page.once('dialog', (d) => void d.accept());
    await entry.locator('button:has-text("delete")').click();
    await entry.waitFor({ state: 'detached' });
    assert.equal((await app.request('GET', `/v1/sessions/${sessionId}/storage/keys`)).body.total, 0);

    await showView(page, '#/admin', '[data-testid=provider-form]');
    await page.fill('[data-testid=provider-form] input[name=name]', 'Simulator');
    await page.selectOption('[data-testid=provider-form] select[name=provider_type]', 'llmsim');
    await page.fill('[data-testid=provider-form] input[name=api_key]', 'unused-key');
    await page.click('[data-testid=provider-form] button[type=submit]');
    await page.waitForSelector('[data-testid=providers] td:has-text("Simulator")');
    await page.selectOption('[data-testid=model-form] select[name=provider_id]', { label: 'Simulator' });
    await page.fill('[data-testid=model-form] input[name=model_id]', 'sim-fast');
    await page.fill('[data-testid=model-form] input[name=display_name]', 'Sim fast');
    await page.click('[data-testid=model-form] button[type=submit]');
    await page.waitForSelector('[data-testid=models] td:has-text("Sim fast")');
    const models = await app.request('GET', '/v1/llm-models');
    const model = models.body.data.find((m: { display_name: string }) => m.display_name === 'Sim fast');
    assert.ok(model, 'the model is stored');

    await showView(page, `#/sessions/${sessionId}/chat`, 'select[name=model_id]');
    await page.selectOption('select[name=model_id]', { label: 'Sim fast' });
    await page.fill('textarea[name=text]', 'which model?');
    await page.click('form.composer button[type=submit]');
    await page.waitForSelector('[data-turn-stats]');
    const completed = await app.request('GET', `/v1/sessions/${sessionId}/events?types=output.message.completed`);
    assert.equal(completed.body.data.at(-1).data.metadata.model_id, model.id, 'the turn ran on the chosen model');
    assert.ok((await sidewaysOverflow(page)) <= 0);
    assert.deepEqual(errors, []);
  });
});
