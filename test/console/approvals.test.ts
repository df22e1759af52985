import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import {
  lastMessageAndComposer,
  overflowCulprits,
  showView,
  sidewaysOverflow,
  useConsoleBed,
  VIEWPORTS,
  type ViewportName,
} from '../helpers/console.js';

/**
 * Tool approval in the console (decision 0101), at a desktop and a phone size: an agent whose
 * rule asks before `get_current_*` runs calls the tool; the chat shows the pending call with its
 * arguments above the sticky composer, nothing sideways; Approve runs it (its result and the
 * agent's reply follow), and in a second turn Deny with a reason ends the call with that reason,
 * which is what the model reads (the simulator repeats its tool results in its reply).
 */
describe('console: approving and denying tool calls (chromium, desktop and phone)', () => {
  const bed = useConsoleBed({
    agent: {
      name: 'Clockwatcher',
      capabilities: ['current_time'],
      tool_approvals: [{ tool: 'get_current_*', policy: 'always_ask' }],
    },
  });

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`${size}: the pending call shows; Approve runs it; Deny with a reason is the result the model sees`, async () => {
      const { app } = bed;
      const sessionId = await bed.newSession(`Approvals on a ${size}`);
      const { page, errors } = await bed.open(size);
      await showView(page, `#/sessions/${sessionId}/chat`, '[data-testid=feed-state][data-state=live]');

      // Turn 1: ask → approve.
      await send(page, '@tool get_current_time {"timezone":"UTC"}');
      const first = await pendingPrompt(page, size);
      assert.match((await first.prompt.textContent()) ?? '', /get_current_time[\s\S]*"timezone": "UTC"/);
      // While a call waits a new message can only queue behind it (decision 0097): no Send, a Queue.
      assert.equal(await page.locator('form.composer button[type=submit]').count(), 0, 'no Send while a call waits');
      assert.equal(await page.locator('form.composer button[data-on-busy=enqueue]').count(), 1, 'Queue instead');
      assert.equal(await page.textContent('[data-testid=turn-state]'), 'waiting for your answer', 'not "working…" while it waits');
      const waiting = await app.request('GET', `/v1/sessions/${sessionId}`);
      assert.equal(waiting.body.status, 'waiting_for_tool_results');
      assert.equal((await toolEvents(app, sessionId, first.callId)).started, 0, 'nothing ran before the decision');
      await first.prompt.locator('button:has-text("Approve")').click();
      await page.waitForSelector(`li.tool[data-tool-call-id="${first.callId}"][data-status=success]`);
      await page.waitForSelector('li.msg.agent .reply:has-text("Received 1 tool result")');
      await page.waitForSelector('[data-turn-stats]');
      assert.equal(await page.locator('[data-testid=approval-prompt]').count(), 0, 'the prompt is gone once decided');
      const ran = await toolEvents(app, sessionId, first.callId);
      assert.deepEqual({ started: ran.started, success: ran.success }, { started: 1, success: true });

      // Turn 2: ask → deny with a reason. A long unbroken argument must wrap on the phone.
      const zone = `Europe/${'Nowhere_'.repeat(12)}`;
      await send(page, `@tool get_current_time {"timezone":"${zone}"}`);
      const second = await pendingPrompt(page, size);
      assert.notEqual(second.callId, first.callId);
      await second.prompt.locator('input').fill('not during the audit');
      await second.prompt.locator('button:has-text("Deny")').click();
      await page.waitForSelector(`li.tool[data-tool-call-id="${second.callId}"][data-status=error]`);
      const reply = page.locator('li.msg.agent .reply').last();
      await page.waitForSelector('[data-turn-stats] >> nth=1');
      assert.match((await reply.textContent()) ?? '', /get_current_time \(error\): not during the audit/);
      const denied = await toolEvents(app, sessionId, second.callId);
      assert.deepEqual(denied, { started: 0, success: false, error: 'not during the audit' }, 'denied: never ran');

      const m = await lastMessageAndComposer(page);
      assert.ok(m.lastBottom <= m.composerTop + 1 && m.lastTop >= 0, `${size}: the last entry is in view (${JSON.stringify(m)})`);
      assert.ok((await sidewaysOverflow(page)) <= 0, `${size}: ${(await overflowCulprits(page)).join(', ')}`);
      assert.deepEqual(errors, [], 'no JavaScript errors');
    });
  }
});

async function send(page: Page, text: string): Promise<void> {
  await page.fill('textarea[name=text]', text);
  await page.click('form.composer button[type=submit]');
}

/**
 * Waits for the approval prompt; checks that the page does not scroll sideways and that the
 * prompt's buttons are on screen above the sticky composer (not hidden behind it).
 */
async function pendingPrompt(page: Page, size: ViewportName) {
  const prompt = page.locator('[data-testid=approval-prompt]');
  await prompt.waitFor();
  const callId = (await prompt.getAttribute('data-tool-call-id'))!;
  assert.ok(callId, 'the prompt names its call');
  assert.ok((await sidewaysOverflow(page)) <= 0, `${size}: scrolls sideways: ${(await overflowCulprits(page)).join(', ')}`);
  const buttons = (await prompt.locator('.bar').boundingBox())!;
  const composer = (await page.locator('[data-testid=composer]').boundingBox())!;
  assert.ok(
    buttons.y >= 0 && buttons.y + buttons.height <= composer.y + 1,
    `${size}: Approve and Deny are above the composer (${JSON.stringify({ buttons, composer })})`,
  );
  return { prompt, callId };
}

/** How often the call started, and how it ended, from the session's stored events. */
async function toolEvents(app: TestApp, sessionId: string, callId: string) {
  const r = await app.request('GET', `/v1/sessions/${sessionId}/events?limit=1000`);
  assert.equal(r.status, 200, r.text);
  const events: { type: string; data: Record<string, any> }[] = r.body.data;
  const started = events.filter((e) => e.type === 'tool.started' && e.data['tool_call']?.id === callId).length;
  const done = events.find((e) => e.type === 'tool.completed' && e.data['tool_call_id'] === callId);
  return { started, success: done?.data['success'], ...(done?.data['error'] ? { error: done.data['error'] } : {}) };
}
