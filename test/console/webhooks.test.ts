import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { overflowCulprits, showView, sidewaysOverflow, useConsoleBed, VIEWPORTS, type ViewportName } from '../helpers/console.js';
import { FAST_WEBHOOKS, startReceiver, type Receiver } from '../webhooks/receiver.js';

async function noSidewaysScroll(page: Page, where: string): Promise<void> {
  const overflow = await sidewaysOverflow(page);
  assert.ok(overflow <= 0, `${where}: scrolls sideways by ${overflow} px: ${(await overflowCulprits(page)).join(', ')}`);
}

/**
 * The console's Webhooks view (issue 28 item 2, issue 31) and the agent editor's MCP servers, in
 * chromium against a service that delivers to a real local receiver checking the signatures.
 */
describe('console: webhooks and MCP servers (chromium, desktop and phone)', () => {
  const bed = useConsoleBed({ agent: { name: 'Hooks', capabilities: ['current_time'] }, env: FAST_WEBHOOKS });
  let rx: Receiver;

  before(async () => {
    rx = await startReceiver({ after: bed.onClose });
  });

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`${size}: create an endpoint (secret once), test-send, the delivery succeeds in the table; disable, enable, rotate, delete`, async () => {
      const { app } = bed;
      const { page, errors } = await bed.open(size);
      page.on('dialog', (d) => void d.accept());
      await showView(page, '#/webhooks', '[data-testid=webhook-event-types] input[value="turn.completed"]');
      assert.equal(await page.locator('h1').textContent(), 'Webhooks');
      assert.equal(await page.title(), 'Webhooks · Agent Session Service');
      assert.deepEqual(await page.locator('header nav [aria-current=page]').allTextContents(), ['Webhooks']);
      // The catalogue comes from the API: no token deltas, the lifecycle types are there.
      const offered = await page
        .locator('[data-testid=webhook-event-types] input[name=event_types]')
        .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
      assert.ok(offered.includes('session.idled') && offered.includes('turn.failed'), offered.join(','));
      assert.ok(!offered.some((t) => t.endsWith('.delta')), 'no deltas offered');

      const url = `${rx.url}/${size}`;
      await page.fill('[data-testid=webhook-form] input[name=url]', url);
      await page.fill('[data-testid=webhook-form] input[name=description]', `CRM on a ${size}`);
      await page.check('[data-testid=webhook-form] input[value="turn.completed"]');
      await page.check('[data-testid=webhook-form] input[value="session.idled"]');
      await page.click('[data-testid=webhook-form] button[type=submit]');
      const secret = (await page.locator('[data-testid=webhook-secret]').textContent())!;
      assert.match(secret, /^whsec_/);
      rx.secrets = [secret];
      const row = page.locator(`[data-testid=webhooks] tr:has(code:text-is("${url}"))`);
      await row.waitFor();
      const endpointId = (await row.getAttribute('data-endpoint-id'))!;
      const types = (await row.locator('td[data-label="Event types"]').textContent())!.split(', ').sort();
      assert.deepEqual(types, ['session.idled', 'turn.completed']);
      assert.match((await row.textContent())!, /active/);
      await noSidewaysScroll(page, `${size} webhooks with the secret shown`);

      // The secret is shown once: gone when dismissed, and not in the API's read of the endpoint.
      await page.click('[data-testid=webhook-secret-card] button');
      assert.equal(await page.locator('[data-testid=webhook-secret]').count(), 0);
      const got = await app.request('GET', `/v1/webhooks/${endpointId}`);
      assert.deepEqual([got.status, [...got.body.event_types].sort(), got.body.description], [200, types, `CRM on a ${size}`]);

      // Test-send: the receiver gets a signed webhook.test; the table shows it delivered.
      const before = rx.received.length;
      await row.locator('button:text-is("Test")').click();
      await rx.waitFor((all) => all.slice(before).some((r) => r.json.type === 'webhook.test'), 20_000, 'the test delivery');
      const got1 = rx.received.slice(before).find((r) => r.json.type === 'webhook.test')!;
      assert.deepEqual(got1.verifiedBy, [0], 'signed with the secret the console showed');
      const delivered = page.locator(`[data-testid=webhook-deliveries][data-endpoint-id="${endpointId}"] tr[data-state=delivered]`);
      await delivered.waitFor({ timeout: 15_000 });
      assert.match((await delivered.textContent())!, /webhook\.test/);
      assert.match((await delivered.textContent())!, /200/);
      await delivered.locator('button:text-is("Attempts")').click();
      const attempt = page.locator(
        `[data-testid=webhook-deliveries][data-endpoint-id="${endpointId}"] [data-testid=webhook-attempts] li[data-status="200"]`,
      );
      await attempt.waitFor();
      assert.match((await attempt.textContent())!, /#1 .*HTTP 200 in \d+ ms/);
      // The attempts open below the delivery, not in its last cell: the columns keep their room and an event name is not split.
      const eventLines = await delivered.locator('td[data-label=Event] code').evaluate((el) => el.getClientRects().length);
      assert.equal(eventLines, 1, `${size}: the event name of a delivery with its attempts open is on one line`);
      await noSidewaysScroll(page, `${size} deliveries with attempts`);

      // Redeliver: the same webhook-id arrives again.
      await delivered.locator('button:text-is("Redeliver")').click();
      await rx.waitFor((all) => all.filter((r) => r.id === got1.id).length === 2, 20_000, 'the redelivery');

      // Disable, then enable.
      await row.locator('button:text-is("Disable")').click();
      await page.locator(`[data-testid=webhooks] tr[data-endpoint-id="${endpointId}"][data-status=disabled]`).waitFor();
      assert.equal((await app.request('GET', `/v1/webhooks/${endpointId}`)).body.status, 'disabled');
      assert.ok(await row.locator('button:text-is("Test")').isDisabled(), 'no test-send to a disabled endpoint');
      await row.locator('button:text-is("Enable")').click();
      await page.locator(`[data-testid=webhooks] tr[data-endpoint-id="${endpointId}"][data-status=active]`).waitFor();

      // Rotate: a new secret, shown once; deliveries are signed with it (and the old one during the overlap).
      await row.locator('button:text-is("Rotate secret")').click();
      const rotated = (await page.locator('[data-testid=webhook-secret]').textContent())!;
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, secret);
      rx.secrets = [secret, rotated];
      const beforeRotated = rx.received.length;
      await row.locator('button:text-is("Test")').click();
      const [afterRotation] = (await rx.waitFor((all) => all.length > beforeRotated, 20_000, 'a delivery after rotation')).slice(
        beforeRotated,
      );
      assert.ok(afterRotation!.verifiedBy.includes(1), 'signed with the rotated secret');

      // Delete.
      await row.locator('button:text-is("Delete")').click();
      await row.waitFor({ state: 'detached' });
      assert.equal((await app.request('GET', `/v1/webhooks/${endpointId}`)).status, 404);
      await noSidewaysScroll(page, `${size} webhooks after delete`);
      assert.deepEqual(errors, [], 'no JavaScript errors');
    });
  }

  it('a bad URL gets a sentence, not a schema pattern; members see no Webhooks entry', async () => {
    const { app } = bed;
    const { page, errors } = await bed.open('phone');
    await showView(page, '#/webhooks', '[data-testid=webhook-event-types] input[value="turn.completed"]');
    await page.fill('[data-testid=webhook-form] input[name=url]', 'http://10.1.2.3/hook');
    await page.check('[data-testid=webhook-form] input[value="turn.failed"]');
    await page.click('[data-testid=webhook-form] button[type=submit]');
    const error = page.locator('[data-testid=webhook-form] .error');
    await error.waitFor();
    const text = (await error.textContent())!;
    assert.match(text, /^Not created: /);
    assert.doesNotMatch(text, /[{}[\]^$\\]/, text);
    const list = await app.request('GET', '/v1/webhooks');
    assert.ok(!list.text.includes('10.1.2.3'), 'nothing was created');
    assert.deepEqual(errors, []);

    const member = await app.request('POST', '/v1/users', {
      body: { email: 'member-hooks@example.com', name: 'Member', password: 'a-long-password-1', role: 'member' },
    });
    assert.equal(member.status, 201, member.text);
    const login = await app.request('POST', '/v1/auth/login', {
      body: { email: 'member-hooks@example.com', password: 'a-long-password-1' },
    });
    assert.equal(login.status, 200, login.text);
    const key = await fetch(`${app.url}/v1/auth/api-keys`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${login.body.access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'console' }),
    });
    assert.equal(key.status, 201);
    const { page: mp } = await bed.open('desktop', { key: ((await key.json()) as { key: string }).key });
    assert.equal(await mp.locator('header nav a:text-is("Webhooks")').count(), 0);
    await showView(mp, '#/webhooks');
    assert.match((await mp.locator('main').textContent())!, /Only admins manage webhooks/);
  });

  it('desktop: a refused attempt reads as its status once, marked as an error; the retry follows it; event names stay whole', async () => {
    const { app } = bed;
    rx.answer = () => ({ status: 503 });
    const created = await app.request('POST', '/v1/webhooks', {
      body: { url: `${rx.url}/refusing`, description: 'Refuses once', event_types: ['turn.completed'] },
    });
    assert.equal(created.status, 201, created.text);
    const endpointId: string = created.body.endpoint.id;
    const before = rx.received.length;
    assert.equal((await app.request('POST', `/v1/webhooks/${endpointId}/test`)).status, 202);
    // The first attempt has its 503 (the answer is chosen when a request arrives): the retry gets a 200.
    await rx.waitFor((all) => all.length > before, 20_000, 'the first attempt');
    rx.answer = () => ({ status: 200 });
    // A turn adds a turn.completed delivery: with the long names and dates a real table holds, the columns are tight.
    const sessionId = await bed.newSession('Refused once');
    const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { message: { content: [{ type: 'text', text: 'hi' }] } },
    });
    assert.equal(sent.status, 201, sent.text);
    const { page, errors } = await bed.open('desktop');
    await showView(page, '#/webhooks', `[data-testid=webhooks] tr[data-endpoint-id="${endpointId}"]`);
    await page.click(`[data-testid=webhooks] tr[data-endpoint-id="${endpointId}"] button:text-is("Deliveries")`);
    const table = page.locator(`[data-testid=webhook-deliveries][data-endpoint-id="${endpointId}"]`);
    await table.locator('tr[data-state=delivered]:has(code:text-is("turn.completed"))').waitFor({ timeout: 15_000 });
    const delivered = table.locator('tr[data-state=delivered]:has(code:text-is("webhook.test"))');
    await delivered.waitFor({ timeout: 15_000 });
    await delivered.locator('button:text-is("Attempts")').click();
    const attempts = page.locator('[data-testid=webhook-attempts] li');
    await attempts.nth(1).waitFor();
    const refused = (await attempts.nth(0).textContent())!;
    assert.match(refused, /^\s*#1 .*: HTTP 503 in \d+ ms\s*$/, refused);
    assert.equal(await attempts.nth(0).locator('.error').textContent(), 'HTTP 503');
    assert.match((await attempts.nth(1).textContent())!, /#2 .*: HTTP 200 in \d+ ms/);
    assert.equal(await attempts.nth(1).locator('.error').count(), 0);
    const lines = await table.locator('td[data-label=Event] code').evaluateAll((els) => els.map((el) => el.getClientRects().length));
    assert.deepEqual(lines, [1, 1], 'each event name on one line (not split mid-word)');
    assert.deepEqual(errors, []);
  });

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`${size}: the agent editor saves MCP servers (secret references only) and they round-trip; a literal header value never shows`, async () => {
      const { app } = bed;
      const literal = `literal-value-${size}-0123456789`;
      const created = await app.request('POST', '/v1/agents', {
        body: {
          name: `mcp-${size}`,
          system_prompt: 'You help.',
          capabilities: [
            'current_time',
            {
              ref: 'mcp',
              config: { servers: [{ name: 'legacy', url: 'https://legacy.example.com/mcp', headers: { 'X-Api-Key': literal } }] },
            },
          ],
        },
      });
      assert.equal(created.status, 201, created.text);
      const agentId: string = created.body.id;
      const { page, errors } = await bed.open(size);
      await showView(page, `#/agents/${agentId}`, '[data-testid=mcp-servers] [data-server-index="0"]');
      assert.ok(!(await page.content()).includes(literal), 'the literal header value is not in the page');
      assert.equal(await page.locator('[data-testid=hidden-header]').count(), 1);

      await page.click('[data-testid=mcp-servers] button:text-is("Add MCP server")');
      const server = page.locator('[data-testid=mcp-servers] [data-server-index="1"]');
      await server.locator('[data-field=name]').fill('tickets');
      await server.locator('[data-field=url]').fill('https://tickets.example.com/mcp');
      await server.locator('[data-field=transport]').selectOption('streamable_http');
      await server.locator('[data-field=allowed_tools]').fill('search, get_ticket');
      await server.locator('button:text-is("Add header")').click();
      await server.locator('[data-field=header-name]').fill('Authorization');
      // A literal value is refused by the console: only references are entered.
      await server.locator('[data-field=header-value]').fill('Bearer sk-plain');
      await page.click('[data-testid=agent-form] button[type=submit]');
      const refused = page.locator('main .error');
      await refused.waitFor();
      assert.match((await refused.textContent())!, /must be a secret reference/);
      assert.equal((await app.request('GET', `/v1/agents/${agentId}`)).body.capabilities.length, 2, 'nothing saved');

      await server.locator('[data-field=header-value]').fill('Bearer {{secret:TICKETS_TOKEN}}');
      await page.click('[data-testid=agent-form] button[type=submit]');
      await page.locator('[data-testid=agent-form] .ok:text-is("Saved.")').waitFor();
      const stored = await app.request('GET', `/v1/agents/${agentId}`);
      assert.deepEqual(stored.body.capabilities, [
        'current_time',
        {
          ref: 'mcp',
          config: {
            servers: [
              { name: 'legacy', url: 'https://legacy.example.com/mcp', headers: { 'X-Api-Key': literal } },
              {
                name: 'tickets',
                url: 'https://tickets.example.com/mcp',
                headers: { Authorization: 'Bearer {{secret:TICKETS_TOKEN}}' },
                allowed_tools: ['search', 'get_ticket'],
                transport: 'streamable_http',
              },
            ],
          },
        },
      ]);
      // Reloaded, the editor shows what was stored; the literal value still does not show.
      await page.reload();
      await showView(page, `#/agents/${agentId}`, '[data-testid=mcp-servers] [data-server-index="1"]');
      const again = page.locator('[data-testid=mcp-servers] [data-server-index="1"]');
      assert.equal(await again.locator('[data-field=name]').inputValue(), 'tickets');
      assert.equal(await again.locator('[data-field=allowed_tools]').inputValue(), 'search, get_ticket');
      assert.equal(await again.locator('[data-field=header-value]').inputValue(), 'Bearer {{secret:TICKETS_TOKEN}}');
      assert.equal(await again.locator('[data-field=transport]').inputValue(), 'streamable_http');
      assert.ok(!(await page.content()).includes(literal));
      await noSidewaysScroll(page, `${size} agent editor with MCP servers`);

      // Removing the legacy server drops its header with it.
      await page.locator('[data-testid=mcp-servers] [data-server-index="0"] button:text-is("Remove server")').click();
      await page.click('[data-testid=agent-form] button[type=submit]');
      await page.locator('[data-testid=agent-form] .ok:text-is("Saved.")').waitFor();
      const after = await app.request('GET', `/v1/agents/${agentId}`);
      assert.deepEqual(
        after.body.capabilities[1].config.servers.map((s: { name: string }) => s.name),
        ['tickets'],
      );
      assert.ok(!after.text.includes(literal));
      assert.deepEqual(errors, [], 'no JavaScript errors');
    });
  }
});
