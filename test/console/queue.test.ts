import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
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
 * Messages sent while a turn runs, in the console (issue 26 item 3, issue 31; decision 0097):
 * the composer queues a message or interrupts the turn; queued messages show above it with
 * their place and a cancel button, leave when their turn starts (input.dequeued over the chat's
 * stream), and the session list counts them. At a desktop and a phone size, with the layout
 * checks of layout.test.ts: no sideways scroll, the newest message above the sticky composer.
 */
describe('console: messages while a turn runs (chromium, desktop and phone)', () => {
  const bed = useConsoleBed({ agent: { name: 'Queuer', capabilities: ['current_time'] } });

  const events = async (sessionId: string) => (await bed.app.request('GET', `/v1/sessions/${sessionId}/events?limit=1000`)).body.data;
  const userTexts = (page: Page) => page.locator('[data-testid=transcript] li.msg.user').allTextContents();

  async function typeAndClick(page: Page, text: string, button: string): Promise<void> {
    await page.fill('textarea[name=text]', text);
    await page.click(button);
    // Sent once the box is empty again (it keeps the text when the service refused it).
    const box = page.locator('textarea[name=text]');
    for (let i = 0; (await box.inputValue()) !== ''; i++) {
      if (i > 150) throw new Error(`not sent: ${await page.locator('[data-testid=composer] [role=alert]').allTextContents()}`);
      await page.waitForTimeout(100);
    }
  }

  function assertLayout(where: string, m: Awaited<ReturnType<typeof lastMessageAndComposer>>, overflow: number, culprits: string[]) {
    assert.ok(overflow <= 0, `${where}: scrolls sideways by ${overflow} px: ${culprits.join(', ')}`);
    assert.ok(
      m.lastBottom <= m.composerTop + 1 && m.lastBottom > 0,
      `${where}: the newest entry shows above the composer (${JSON.stringify(m)})`,
    );
  }

  const layout = async (page: Page, where: string) =>
    assertLayout(where, await lastMessageAndComposer(page), await sidewaysOverflow(page), await overflowCulprits(page));

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`${size}: queue 2 while a slow turn runs, see them listed in order, cancel one, the other runs; the session list counts them`, async () => {
      const sessionId = await bed.newSession(`Queue on a ${size} with a title long enough to wrap on a phone`);
      const { app } = bed;
      const { page, errors } = await bed.open(size);
      await showView(page, `#/sessions/${sessionId}/chat`, '[data-testid=feed-state][data-state=live]');

      // ~8 s of streaming: time to queue, look and cancel on a loaded machine.
      await typeAndClick(page, '@tokens 200 delay=40\nslow one', 'form.composer button[type=submit]');
      await page.waitForSelector('li.msg.agent[data-streaming=true] .reply');
      assert.equal(await page.locator('form.composer button[type=submit]').count(), 0, 'no plain Send while the turn runs');
      const longText = `@tokens 3\nqueued one ${'with_a_long_unbroken_word_that_must_not_push_the_page_sideways_'.repeat(3)}`;
      await typeAndClick(page, longText, 'button[data-on-busy=enqueue]');
      await typeAndClick(page, '@tokens 3\nqueued two', 'button[data-on-busy=enqueue]');

      const rows = page.locator('[data-testid=queued-messages] li[data-queued-id]');
      await rows.nth(1).waitFor();
      assert.deepEqual(await rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-position'))), ['1', '2']);
      const texts = await rows.locator('.text').allTextContents();
      assert.match(texts[0]!, /queued one/);
      assert.match(texts[1]!, /queued two/);
      assert.match((await page.textContent('[data-testid=queued-summary]')) ?? '', /^2 queued/);
      const queuedIds = await rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-queued-id')!));
      const listed = (await app.request('GET', `/v1/sessions/${sessionId}/queue`)).body.data.map((q: { id: string }) => q.id);
      assert.deepEqual(queuedIds, listed, 'the ids and order of GET …/queue');
      if (size === 'desktop') {
        // The list beside the chat reloads as the queue changes: it comes to count both.
        await page.waitForSelector(
          '[data-testid=session-list] li:has(a[aria-current=page]) [data-testid=queued-count]:text-is("2 queued")',
        );
      }
      await layout(page, `${size} with two queued`);

      await rows.nth(0).locator('button:text-is("Cancel")').click();
      await page.waitForSelector(`[data-testid=queued-messages] li[data-queued-id="${queuedIds[0]}"]`, { state: 'detached' });
      assert.deepEqual(await rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-position'))), ['1']);
      assert.match((await rows.locator('.text').textContent()) ?? '', /queued two/);

      // The slow turn ends; the queued one starts (its input.dequeued clears the list) and runs.
      await page.waitForSelector('[data-testid=queued-messages]', { state: 'detached', timeout: 60_000 });
      await page.waitForSelector('[data-turn-stats] >> nth=1', { timeout: 60_000 });
      assert.deepEqual(await userTexts(page), ['@tokens 200 delay=40\nslow one', '@tokens 3\nqueued two']);
      const log = await events(sessionId);
      const dequeued = log.filter((e: { type: string }) => e.type === 'input.dequeued').map((e: { data: unknown }) => e.data);
      assert.deepEqual(
        dequeued.map((d: { queued_id: string; reason: string }) => [d.queued_id, d.reason]),
        [
          [queuedIds[0], 'cancelled'],
          [queuedIds[1], 'started'],
        ],
      );
      assert.equal(log.filter((e: { type: string }) => e.type === 'turn.started').length, 2, 'the cancelled message never ran');
      await layout(page, `${size} after the queued turn`);

      // The sessions view counts a session's waiting messages (one kept busy through the API).
      const busyId = await bed.newSession(`Busy on a ${size}`);
      const send = (text: string, onBusy?: string) =>
        app.request('POST', `/v1/sessions/${busyId}/messages`, {
          body: { message: { content: [{ type: 'text', text }] }, ...(onBusy ? { on_busy: onBusy } : {}) },
        });
      assert.equal((await send('@sleep 30000\nbusy')).status, 201);
      for (const text of ['a', 'b', 'c']) assert.equal((await send(text, 'enqueue')).status, 202);
      await showView(page, '#/sessions', `[data-session-id="${busyId}"] [data-testid=queued-count]`);
      assert.equal(await page.textContent(`[data-session-id="${busyId}"] [data-testid=queued-count]`), '3 queued');
      assert.equal(await page.locator(`[data-session-id="${sessionId}"] [data-testid=queued-count]`).count(), 0, 'none once they ran');
      const overflow = await sidewaysOverflow(page);
      assert.ok(overflow <= 0, `${size} sessions: scrolls sideways by ${overflow} px: ${(await overflowCulprits(page)).join(', ')}`);
      assert.equal((await app.request('POST', `/v1/sessions/${busyId}/cancel`)).status, 200);
      assert.deepEqual(errors, [], 'no JavaScript errors');
    });
  }

  it('desktop: Interrupt cancels the running turn and its message runs next, before one queued earlier', async () => {
    const sessionId = await bed.newSession('Interrupt');
    const { page, errors } = await bed.open('desktop');
    await showView(page, `#/sessions/${sessionId}/chat`, '[data-testid=feed-state][data-state=live]');
    await typeAndClick(page, '@tokens 300 delay=40\nlong', 'form.composer button[type=submit]');
    await page.waitForSelector('li.msg.agent[data-streaming=true] .reply');
    await typeAndClick(page, '@tokens 2\nlater', 'button[data-on-busy=enqueue]');
    await page.locator('[data-testid=queued-messages] li[data-queued-id]').waitFor();
    await typeAndClick(page, '@tokens 2\nnow instead', 'button[data-on-busy=interrupt]');
    await page.waitForSelector('li.notice:has-text("Turn cancelled")', { timeout: 30_000 });
    await page.waitForSelector('[data-turn-stats] >> nth=1', { timeout: 60_000 });
    await page.waitForSelector('[data-testid=queued-messages]', { state: 'detached', timeout: 30_000 });
    // Spec 3.2's cancel adds its own user message to the cancelled turn.
    assert.deepEqual(await userTexts(page), [
      '@tokens 300 delay=40\nlong',
      'User requested to cancel the work.',
      '@tokens 2\nnow instead',
      '@tokens 2\nlater',
    ]);
    await layout(page, 'desktop after the interrupt');
    assert.deepEqual(errors, [], 'no JavaScript errors');
  });
});
