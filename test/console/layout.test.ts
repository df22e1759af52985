import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
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
 * The console as a team uses it, at a desktop (1440×900) and a phone (390×844) size: every view
 * fits without sideways scrolling and is named (an <h1>, the tab title, the navigation marking
 * where one is), every field has a label and a visible border, the chat keeps the newest text
 * above the sticky composer while a reply streams. One service and one chromium for the file.
 */
describe('console layout and accessibility (chromium, desktop and phone)', () => {
  // Long words and names: what pushes a narrow layout sideways when nothing wraps.
  const bed = useConsoleBed({
    agent: {
      name: 'Archivist',
      description: 'Keeps_every_note_in_a_long_unbroken_identifier_that_would_not_wrap_by_itself_anywhere',
      capabilities: ['session_file_system', 'session_storage', 'current_time'],
    },
    // The webhook endpoint below names a loopback address (no DNS here); its events never happen.
    env: { WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' },
  });
  let sessionId: string;

  before(async () => {
    const { app } = bed;
    sessionId = await newSession('Quarterly planning with the whole team');
    const file = await app.request('POST', `/v1/sessions/${sessionId}/fs/reports/q3-summary.md`, {
      raw: '# Q3\n',
      headers: { 'Content-Type': 'text/markdown' },
    });
    assert.equal(file.status, 201, file.text);
    const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: { message: { content: [{ type: 'text', text: 'hello' }] } },
    });
    assert.equal(sent.status, 201, sent.text);
    // A webhook endpoint with a long URL and many event types: the Webhooks view's table has a row to fit.
    const hook = await app.request('POST', '/v1/webhooks', {
      body: {
        url: 'http://127.0.0.1:9/agent-session-service/organisation-wide/turn-failures-and-approvals-for-the-on-call-pager',
        description: 'Pager_for_the_on_call_engineer_with_a_long_unbroken_identifier',
        event_types: ['turn.failed', 'turn.cancelled', 'tool.call_requested'],
      },
    });
    assert.equal(hook.status, 201, hook.text);
  });

  const newSession = (title: string) => bed.newSession(title);

  /** Every view: [hash, what shows it is ready, the main navigation entry it marks]. */
  const views = (): [string, string, string | null][] => [
    ['#/agents', '[data-testid=agents]', 'Agents'],
    ['#/agents/new', 'input[value=current_time]', 'Agents'],
    ['#/agents/import', 'h2:has-text("Examples")', 'Agents'],
    [`#/agents/${bed.agentId}`, 'input[name=description]', 'Agents'],
    ['#/sessions', '[data-testid=sessions]', 'Sessions'],
    [`#/sessions/${sessionId}/chat`, '[data-testid=feed-state][data-state=live]', 'Sessions'],
    [`#/sessions/${sessionId}/events`, '[data-testid=feed-state][data-state=live]', 'Sessions'],
    [`#/sessions/${sessionId}/storage`, '[data-testid=files] li[data-path]', 'Sessions'],
    ['#/admin', '[data-testid=provider-form]', 'Providers & models'],
    ['#/webhooks', '[data-testid=webhooks] tr[data-endpoint-id]', 'Webhooks'],
  ];

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    it(`${size}: every view fits without sideways scroll, has one <h1>, a title, labelled fields with visible borders`, async () => {
      const { page, errors } = await bed.open(size);
      const titles = new Set<string>();
      let fieldsMeasured = 0;
      for (const [hash, ready, navEntry] of views()) {
        await showView(page, hash, ready);
        const where = `${size} ${hash}`;
        const overflow = await sidewaysOverflow(page);
        assert.ok(overflow <= 0, `${where}: scrolls sideways by ${overflow} px: ${(await overflowCulprits(page)).join(', ')}`);
        const headings = await page.locator('h1').allTextContents();
        assert.equal(headings.length, 1, `${where}: one <h1> (${headings.join(' | ')})`);
        assert.ok(headings[0]!.trim().length > 0, `${where}: the <h1> says something`);
        titles.add(await page.title());
        const current = await page.locator('header nav [aria-current=page]').allTextContents();
        assert.deepEqual(current, navEntry ? [navEntry] : [], `${where}: the navigation marks the current page`);
        assert.deepEqual(await unlabelledFields(page), [], `${where}: every field has a label`);
        const contrast = await fieldBorderContrast(page);
        assert.ok(
          contrast.every((c) => c >= 3),
          `${where}: field borders ≥ 3:1 against their background (${contrast})`,
        );
        fieldsMeasured += contrast.length;
      }
      assert.ok(fieldsMeasured >= 10, `measured the borders of ${fieldsMeasured} fields`);
      assert.equal(titles.size, views().length, `each view has its own page title: ${[...titles].join(' | ')}`);
      assert.deepEqual(errors, [], 'no JavaScript errors');
    });

    it(`${size}: the chat follows a streaming reply above the sticky composer; the turn shows its time and tokens`, async () => {
      const chatId = await newSession(`Streaming on a ${size}`);
      const { page, errors } = await bed.open(size);
      await showView(page, `#/sessions/${chatId}/chat`, '[data-testid=feed-state][data-state=live]');
      await page.fill('textarea[name=text]', '@tokens 60');
      await page.click('form.composer button[type=submit]');
      await page.waitForSelector('[data-turn-stats]');
      // A reply several screens long, sampled while it streams: its end stays in view, above the composer.
      await page.fill('textarea[name=text]', '@tokens 1500 delay=5');
      await page.click('form.composer button[type=submit]');
      await page.waitForSelector('li.msg.agent[data-streaming=true] .reply');
      let samples = 0;
      while ((await page.locator('li.msg.agent[data-streaming=true]').count()) > 0) {
        const m = await lastMessageAndComposer(page);
        if (m.lastBottom - m.lastTop > m.viewport) {
          samples++;
          assert.ok(m.lastBottom <= m.composerTop + 1, `${size}: the streaming text ends under the composer (${JSON.stringify(m)})`);
          assert.ok(m.lastBottom > 0, `${size}: the streaming text is on screen`);
        }
        await page.waitForTimeout(250);
      }
      assert.ok(samples >= 2, `sampled the reply while it streamed and was taller than the screen (${samples})`);
      await page.waitForSelector('[data-turn-stats] >> nth=1');
      const m = await lastMessageAndComposer(page);
      assert.ok(
        m.lastBottom <= m.composerTop + 1 && m.lastTop >= 0,
        `${size}: the last entry is visible after the turn (${JSON.stringify(m)})`,
      );
      const stats = (await page.locator('[data-turn-stats]').last().textContent()) ?? '';
      assert.match(stats, /^\d+(\.\d)? (ms|s) · \d+ in \/ \d+ out tokens/, stats);
      assert.ok((await sidewaysOverflow(page)) <= 0, `${size}: the chat does not scroll sideways`);
      assert.deepEqual(errors, []);
    });
  }

  it('keyboard: timeline rows open with Tab and Enter; the session list beside the chat marks the open session', async () => {
    const { page } = await bed.open('desktop');
    await showView(page, `#/sessions/${sessionId}/events`, '[data-testid=timeline] li[data-type="turn.completed"]');
    const row = page.locator('[data-testid=timeline] li[data-type="input.message"] button.row');
    let presses = 0;
    while (!(await row.evaluate((el) => el.ownerDocument.activeElement === el)) && presses < 80) {
      await page.keyboard.press('Tab');
      presses++;
    }
    assert.ok(presses < 80, 'the row is reached with the Tab key');
    await page.keyboard.press('Enter');
    const json = page.locator('[data-testid=timeline] li[data-type="input.message"] pre');
    await json.waitFor();
    assert.match((await json.textContent()) ?? '', /"hello"/);
    assert.equal(await row.getAttribute('aria-expanded'), 'true');

    await showView(page, `#/sessions/${sessionId}/chat`, '[data-testid=session-list] a[aria-current=page]');
    assert.equal(
      await page.locator('[data-testid=session-list] a[aria-current=page]').textContent(),
      'Quarterly planning with the whole team',
    );
    assert.ok(await page.locator('[data-testid=session-list]').isVisible(), 'beside the chat on a desktop');
  });
});

/** Visible form fields without a label (a <label>, aria-label or aria-labelledby); a placeholder does not count. */
function unlabelledFields(page: Page): Promise<string[]> {
  // A string, not a function: tsx's helpers (`__name`) do not exist in the page.
  return page.evaluate(`[...document.querySelectorAll('input:not([type=hidden]), textarea, select')]
    .filter((f) => f.offsetParent !== null)
    .filter((f) => ![...(f.labels ?? [])].some((l) => l.textContent.trim()) && !f.getAttribute('aria-label') && !f.getAttribute('aria-labelledby'))
    .map((f) => f.outerHTML.slice(0, 80))`);
}

/** The WCAG contrast ratio of each visible text field's border against the background behind it. */
function fieldBorderContrast(page: Page): Promise<number[]> {
  return page.evaluate(`(() => {
    const rgb = (c) => (c.match(/[\\d.]+/g) ?? []).slice(0, 4).map(Number);
    const lin = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    const lum = ([r, g, b]) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    const behind = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c;
      }
      return [255, 255, 255];
    };
    return [...document.querySelectorAll('input:not([type=hidden]):not([type=checkbox]):not([type=file]), textarea, select')]
      .filter((el) => el.offsetParent !== null)
      .map((el) => {
        const a = lum(rgb(getComputedStyle(el).borderTopColor));
        const b = lum(behind(el.parentElement));
        return Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100;
      });
  })()`);
}
