import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronError, nextCronRun } from '../../src/capabilities/schedule-time.js';
import { MAX_ACTIVE_SCHEDULES, sessionScheduleCapability } from '../../src/capabilities/session-schedule.js';
import type { ScheduleInfo } from '../../src/capabilities/storage-ports.js';
import { ToolError } from '../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from './fakes.js';

const create = toolOf(sessionScheduleCapability, 'create_schedule');
const cancel = toolOf(sessionScheduleCapability, 'cancel_schedule');
const list = toolOf(sessionScheduleCapability, 'list_schedules');
const isToolError = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);
const scheduleOf = (r: Awaited<ReturnType<typeof create.execute>>) => jsonOf<{ schedule: ScheduleInfo }>(r).schedule;
// The fake clock: 2026-04-01T12:00:00Z, a Wednesday.

describe('create_schedule', () => {
  it('creates a one-shot schedule at an instant', async () => {
    const ctx = createFakeToolContext();
    const s = scheduleOf(await create.execute({ name: 'remind', message: 'Check the build', scheduled_at: '2026-04-02T09:00:00Z' }, ctx));
    assert.equal(s.kind, 'once');
    assert.equal(s.scheduled_at, '2026-04-02T09:00:00.000Z');
    assert.equal(s.next_run_at, '2026-04-02T09:00:00.000Z');
    assert.equal(s.cron_expression, null);
    assert.equal(s.timezone, 'UTC');
    assert.equal(s.status, 'active');
    assert.equal(ctx.schedules.all.length, 1);
  });

  it('reads an offset-less scheduled_at in the given timezone', async () => {
    const ctx = createFakeToolContext();
    const s = scheduleOf(
      await create.execute({ name: 'r', message: 'm', scheduled_at: '2026-04-02T09:00:00', timezone: 'Europe/Paris' }, ctx),
    );
    assert.equal(s.scheduled_at, '2026-04-02T07:00:00.000Z');
  });

  it('creates a recurring cron schedule in a time zone, computing the next run', async () => {
    const ctx = createFakeToolContext();
    const s = scheduleOf(
      await create.execute({ name: 'daily', message: 'Report', cron_expression: '0 9 * * 1-5', timezone: 'America/New_York' }, ctx),
    );
    assert.equal(s.kind, 'cron');
    assert.equal(s.cron_expression, '0 9 * * 1-5');
    assert.equal(s.timezone, 'America/New_York');
    assert.equal(s.next_run_at, '2026-04-01T13:00:00.000Z'); // 09:00 EDT on Wednesday
  });

  it('refuses both or neither of scheduled_at and cron_expression', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(create.execute({ name: 'x', message: 'm' }, ctx), isToolError(/exactly one of/));
    await assert.rejects(
      create.execute({ name: 'x', message: 'm', scheduled_at: '2026-05-01T00:00:00Z', cron_expression: '* * * * *' }, ctx),
      isToolError(/exactly one of/),
    );
  });

  it('refuses past instants, bad dates, bad zones, bad and non-5-field cron, never-firing cron', async () => {
    const ctx = createFakeToolContext();
    const call = (args: Record<string, unknown>) => create.execute({ name: 'x', message: 'm', ...args }, ctx);
    await assert.rejects(call({ scheduled_at: '2026-04-01T11:59:59Z' }), isToolError(/in the past/));
    await assert.rejects(call({ scheduled_at: 'next tuesday' }), isToolError(/not an ISO 8601 date-time/));
    await assert.rejects(call({ scheduled_at: '2026-05-01T09:00:00Z', timezone: 'Moon/Base' }), isToolError(/Unknown time zone/));
    await assert.rejects(call({ cron_expression: '61 * * * *' }), isToolError(/Invalid cron expression/));
    await assert.rejects(call({ cron_expression: '0 0 9 * * *' }), isToolError(/exactly 5 fields/));
    await assert.rejects(call({ cron_expression: '0 9 31 2 *' }), isToolError(/never fires/));
    assert.equal(ctx.schedules.all.length, 0);
  });

  it(`allows at most ${MAX_ACTIVE_SCHEDULES} active schedules`, async () => {
    const ctx = createFakeToolContext();
    for (let i = 0; i < MAX_ACTIVE_SCHEDULES; i++) await create.execute({ name: `s${i}`, message: 'm', cron_expression: '0 * * * *' }, ctx);
    await assert.rejects(
      create.execute({ name: 'one more', message: 'm', cron_expression: '0 * * * *' }, ctx),
      isToolError(/already active \(maximum 5\)/),
    );
    const first = ctx.schedules.all[0]!.id;
    await cancel.execute({ schedule_id: first }, ctx);
    await create.execute({ name: 'after cancel', message: 'm', cron_expression: '0 * * * *' }, ctx);
  });
});

describe('cancel_schedule and list_schedules', () => {
  it('cancels and lists active (and, on request, inactive) schedules', async () => {
    const ctx = createFakeToolContext();
    const a = scheduleOf(await create.execute({ name: 'a', message: 'm', cron_expression: '*/15 * * * *' }, ctx));
    scheduleOf(await create.execute({ name: 'b', message: 'm', scheduled_at: '2026-06-01T00:00:00Z' }, ctx));
    const cancelled = jsonOf<{ schedule: ScheduleInfo }>(await cancel.execute({ schedule_id: a.id }, ctx)).schedule;
    assert.equal(cancelled.status, 'cancelled');
    const active = jsonOf<{ schedules: ScheduleInfo[]; active: number; max_active: number }>(await list.execute({}, ctx));
    assert.deepEqual(
      active.schedules.map((s) => s.name),
      ['b'],
    );
    assert.equal(active.active, 1);
    assert.equal(active.max_active, 5);
    const all = jsonOf<{ schedules: ScheduleInfo[] }>(await list.execute({ include_inactive: true }, ctx));
    assert.deepEqual(
      all.schedules.map((s) => s.name),
      ['a', 'b'],
    );
  });

  it('reports unknown or inactive schedules as tool errors (from the storage port)', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(cancel.execute({ schedule_id: 'sch_404' }, ctx), isToolError(/Schedule not found: sch_404/));
    const a = scheduleOf(await create.execute({ name: 'a', message: 'm', cron_expression: '0 0 * * *' }, ctx));
    await cancel.execute({ schedule_id: a.id }, ctx);
    await assert.rejects(cancel.execute({ schedule_id: a.id }, ctx), isToolError(/not active/));
  });
});

describe('cron helpers', () => {
  it('validates 5-field expressions and computes runs in a zone', () => {
    assert.equal(cronError('*/5 * * * *', 'UTC'), null);
    assert.equal(cronError('0 9 * * mon-fri', 'Europe/Paris'), null);
    assert.match(cronError('* * *', 'UTC')!, /exactly 5 fields/);
    assert.equal(nextCronRun('0 9 * * *', 'Europe/Paris', new Date('2026-04-01T06:00:00Z'))!.toISOString(), '2026-04-01T07:00:00.000Z');
    assert.equal(nextCronRun('0 9 * * *', 'Europe/Paris', new Date('2026-04-01T07:00:00Z'))!.toISOString(), '2026-04-02T07:00:00.000Z');
  });
});
