import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CreateScheduleInput } from '../../src/capabilities/index.js';
import { storageFixture } from './helpers.js';

const once = (at: string, name = 'n'): CreateScheduleInput => ({
  name,
  message: `message ${name}`,
  kind: 'once',
  scheduled_at: at,
  cron_expression: null,
  timezone: 'UTC',
  next_run_at: at,
  max_active: 5,
});

describe('session schedules (PostgreSQL)', () => {
  it('holds at most 5 active under concurrent creates; cancel frees a slot', async (t) => {
    const fx = await storageFixture(t);
    const { schedules } = fx.storage.forSession(await fx.session());
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => schedules.create(once('2099-01-01T00:00:00.000Z', `s${i}`))),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
    assert.ok(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason.status === 409));
    const [first] = await schedules.list();
    const cancelled = await schedules.cancel(first!.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.next_run_at, null);
    await assert.rejects(schedules.cancel(first!.id), { status: 409 });
    await assert.rejects(schedules.cancel('nope'), { status: 404 });
    await schedules.create(once('2099-01-02T00:00:00.000Z', 'again'));
    assert.equal((await schedules.list()).length, 5);
    assert.equal((await schedules.list({ include_inactive: true })).length, 6);
  });

  it('a due schedule is claimed by exactly one of many concurrent claimers; finish and postpone are fenced', async (t) => {
    const fx = await storageFixture(t);
    const session = await fx.session();
    const { schedules } = fx.storage.forSession(session);
    const past = new Date(Date.now() - 1000).toISOString();
    await schedules.create(once(past, 'due'));
    await schedules.create(once('2099-01-01T00:00:00.000Z', 'later'));
    const queue = fx.storage.scheduleQueue;
    const claims = (await Promise.all(Array.from({ length: 6 }, (_, i) => queue.claimDue(`w${i}`, 60_000)))).filter((c) => c !== null);
    assert.equal(claims.length, 1);
    const claim = claims[0]!;
    assert.equal(claim.name, 'due');
    assert.equal(claim.session_id, session.id);
    assert.equal(await claim.postpone(60_000), true);
    assert.equal(await queue.claimDue('w9', 60_000), null, 'postponed: not due yet');
    assert.equal(await claim.finish(null), false, 'the claim was given back');
    await fx.store.sql(`update session_schedules set available_at = now() - interval '1 second'`);
    const again = (await queue.claimDue('w9', 60_000))!;
    assert.equal(await again.finish(null), true);
    const all = await schedules.list({ include_inactive: true });
    assert.equal(all.find((s) => s.name === 'due')!.status, 'completed');
    assert.ok(all.find((s) => s.name === 'due')!.last_run_at);
    assert.equal(await queue.claimDue('w9', 60_000), null);
  });

  it('an expired lease makes the schedule claimable again and fences the old claimer', async (t) => {
    const fx = await storageFixture(t);
    const { schedules } = fx.storage.forSession(await fx.session());
    await schedules.create(once(new Date(Date.now() - 1000).toISOString()));
    const queue = fx.storage.scheduleQueue;
    const stale = (await queue.claimDue('a', 1))!;
    await new Promise((r) => setTimeout(r, 20));
    const fresh = (await queue.claimDue('b', 60_000))!;
    assert.equal(fresh.id, stale.id);
    assert.equal(await stale.finish(null), false);
    assert.equal(await fresh.finish(null), true);
  });
});
