import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createScheduler, nextRunAfterFiring, scheduledMessageText } from '../../actors/scheduler/scheduler.js';
import type { CreateScheduleInput } from '../../src/capabilities/index.js';
import { SessionBusyError } from '../../src/errors.js';
import type { ScheduleClaim } from '../../src/session-storage/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { createSession, listAll, runTools } from '../api/fs/helpers.js';
import { silentLog, storageFixture } from '../session-storage/helpers.js';

const once = (at: Date, name: string): CreateScheduleInput => ({
  name,
  message: `run ${name}`,
  kind: 'once',
  scheduled_at: at.toISOString(),
  cron_expression: null,
  timezone: 'UTC',
  next_run_at: at.toISOString(),
  max_active: 5,
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('scheduler (store level)', () => {
  it('two schedulers on one database fire each due schedule exactly once', async (t) => {
    const fx = await storageFixture(t);
    const past = new Date(Date.now() - 1000);
    for (let s = 0; s < 6; s++) {
      const { schedules } = fx.storage.forSession(await fx.session());
      for (let i = 0; i < 3; i++) await schedules.create(once(past, `s${s}-${i}`));
    }
    const fired: string[] = [];
    const submit = async (claim: ScheduleClaim) => {
      await new Promise((r) => setTimeout(r, 5));
      fired.push(claim.name);
    };
    const a = createScheduler({ queue: fx.storage.scheduleQueue, submit, log: silentLog }, { instanceId: 'a' });
    const b = createScheduler({ queue: fx.storage.scheduleQueue, submit, log: silentLog }, { instanceId: 'b' });
    const [na, nb] = await Promise.all([a.drain(), b.drain()]);
    assert.equal(na + nb, 18);
    assert.equal(fired.length, 18);
    assert.equal(new Set(fired).size, 18);
    assert.equal(await a.drain(), 0);
    const [row] = await fx.store.sql<{ n: string }>(
      `select count(*) as n from session_schedules where status = 'completed' and fire_count = 1`,
    );
    assert.equal(Number(row!.n), 18);
  });

  it('a busy session postpones the firing; it fires after, once', async (t) => {
    const fx = await storageFixture(t);
    const { schedules } = fx.storage.forSession(await fx.session());
    await schedules.create(once(new Date(Date.now() - 1000), 'busy'));
    let attempts = 0;
    const fired: string[] = [];
    const submit = async (claim: ScheduleClaim, text: string) => {
      if (++attempts <= 2) throw new SessionBusyError();
      fired.push(text);
      assert.equal(claim.name, 'busy');
    };
    const s = createScheduler(
      { queue: fx.storage.scheduleQueue, submit, log: silentLog },
      { instanceId: 'a', busyRetryMs: 200, pollMs: 50 },
    );
    s.start();
    t.after(() => s.close());
    await until('fired', async () => fired.length === 1);
    assert.equal(attempts, 3);
    assert.deepEqual(fired, [scheduledMessageText({ name: 'busy', message: 'run busy' })]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fired.length, 1);
    assert.equal((await schedules.list({ include_inactive: true }))[0]!.status, 'completed');
  });

  it('cron schedules stay active with the next run computed in their time zone; missed runs collapse into one firing', async (t) => {
    const fx = await storageFixture(t);
    const { schedules } = fx.storage.forSession(await fx.session());
    const longAgo = new Date(Date.now() - 3 * 3600_000).toISOString();
    await schedules.create({
      name: 'hourly',
      message: 'tick',
      kind: 'cron',
      scheduled_at: null,
      cron_expression: '0 * * * *',
      timezone: 'Asia/Kolkata',
      next_run_at: longAgo,
      max_active: 5,
    });
    const fired: string[] = [];
    const s = createScheduler(
      { queue: fx.storage.scheduleQueue, submit: async (c) => void fired.push(c.name), log: silentLog },
      { instanceId: 'a' },
    );
    assert.equal(await s.drain(), 1);
    assert.equal(await s.drain(), 0);
    const [info] = await schedules.list();
    assert.equal(info!.status, 'active');
    const next = new Date(info!.next_run_at!);
    assert.ok(next.getTime() > Date.now());
    assert.equal(next.getUTCMinutes(), 30, 'Asia/Kolkata is UTC+5:30: the top of its hour is :30 UTC');
    assert.equal(nextRunAfterFiring({ kind: 'once', cron_expression: null, timezone: 'UTC', run_at: longAgo }, new Date()), null);
  });
});

describe('scheduler (two app instances on one database)', () => {
  it('create_schedule through a turn fires exactly once as a message that starts a turn, after a restart of the creating instance', async (t) => {
    const db = await createTestDatabase('sched');
    t.after(() => db.drop());
    const env = { SECRETS_ENCRYPTION_KEY: `test:${randomBytes(32).toString('base64')}`, INSTANCE_ID: 'inst-a' };
    const a = await startTestApp(t, { databaseUrl: db.url, env });
    const b = await startTestApp(t, { databaseUrl: db.url, env: { ...env, INSTANCE_ID: 'inst-b' } });
    const id = await createSession(a, ['session_schedule']);
    const at = new Date(Date.now() + 4000).toISOString();
    const [created] = await runTools(a, id, [['create_schedule', { name: 'wake', message: 'good morning', scheduled_at: at }]]);
    assert.equal(created!.success, true, created!.error);
    assert.equal(created!.result.schedule.status, 'active');
    const [listed] = await runTools(b, id, [['list_schedules', {}]]);
    assert.equal(listed!.result.active, 1);
    await a.app.close(); // the creating instance goes away; the schedule lives in the database

    const events = await until(
      'scheduled turn completed',
      async () => {
        const all = await listAll(b, id);
        const input = all.filter((e) => e.type === 'input.message' && JSON.stringify(e.data).includes('[Scheduled message'));
        return input.length >= 1 && all.filter((e) => e.type === 'turn.completed').length >= 3 ? all : undefined;
      },
      30_000,
    );
    const scheduled = events.filter((e) => e.type === 'input.message' && JSON.stringify(e.data).includes('[Scheduled message'));
    assert.equal(scheduled.length, 1);
    assert.equal(scheduled[0]!.data.message.role, 'user');
    assert.equal(scheduled[0]!.data.message.content[0].text, scheduledMessageText({ name: 'wake', message: 'good morning' }));
    const reply = events.filter((e) => e.type === 'output.message.completed').at(-1)!;
    assert.match(reply.data.message.content[0].text, /good morning/);
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(
      (await listAll(b, id)).filter((e) => e.type === 'input.message' && JSON.stringify(e.data).includes('[Scheduled message')).length,
      1,
    );
    const [after] = await runTools(b, id, [['list_schedules', { include_inactive: true }]]);
    assert.equal(after!.result.schedules[0].status, 'completed');
  });

  for (const mode of ['postgres', 'nats'] as const) {
    it(`two live instances (${mode}): due schedules of many sessions each fire once; a busy session gets its message after the running turn`, async (t) => {
      const db = await createTestDatabase('sched2');
      t.after(() => db.drop());
      const env = { SECRETS_ENCRYPTION_KEY: `test:${randomBytes(32).toString('base64')}` };
      const a = await startTestApp(t, { mode, databaseUrl: db.url, env: { ...env, INSTANCE_ID: 'inst-a' } });
      await startTestApp(t, {
        mode,
        databaseUrl: db.url,
        ...(a.natsUrl ? { natsUrl: a.natsUrl } : {}),
        env: { ...env, INSTANCE_ID: 'inst-b' },
      });
      const sessions = await Promise.all(Array.from({ length: 4 }, () => createSession(a, ['session_schedule'])));
      const busy = sessions[0]!;
      // A long turn keeps the first session busy while its schedule comes due.
      const long = await a.request('POST', `/v1/sessions/${busy}/messages`, {
        body: { message: { content: [{ type: 'text', text: '@tokens 40 delay=100' }] } },
      });
      assert.equal(long.status, 201);
      const due = new Date(Date.now() + 1500);
      for (const [i, id] of sessions.entries()) {
        const session = await a.app.services.storage.access.owned(
          { org_id: (await a.request('GET', `/v1/sessions/${id}`)).body.organization_id },
          id,
        );
        await a.app.services.storage.forSession(session).schedules.create(once(due, `job${i}`));
      }
      await until(
        'every schedule fired',
        async () => {
          const [row] = await a.app.services.store.sql<{ n: string }>(
            `select count(*) as n from session_schedules where status = 'completed'`,
          );
          return Number(row!.n) === sessions.length;
        },
        30_000,
      );
      for (const id of sessions) {
        const all = await until('turns done', async () => {
          const ev = await listAll(a, id);
          return ev.filter((e) => e.type === 'session.idled').length >= (id === busy ? 2 : 1) ? ev : undefined;
        });
        const inputs = all.filter((e) => e.type === 'input.message' && JSON.stringify(e.data).includes('[Scheduled message'));
        assert.equal(inputs.length, 1, `session ${id} got ${inputs.length} scheduled messages`);
      }
      const ev = await listAll(a, busy);
      const firstIdle = ev.findIndex((e) => e.type === 'session.idled');
      const scheduledAt = ev.findIndex((e) => e.type === 'input.message' && JSON.stringify(e.data).includes('[Scheduled message'));
      assert.ok(firstIdle >= 0 && scheduledAt > firstIdle, 'the scheduled message arrives after the running turn');
      const [row] = await a.app.services.store.sql<{ n: string }>(`select coalesce(sum(fire_count), 0) as n from session_schedules`);
      assert.equal(Number(row!.n), sessions.length);
      const claimers = await a.app.services.store.sql<{ n: string }>(
        `select count(*) as n from session_schedules where claimed_by is not null`,
      );
      assert.equal(Number(claimers[0]!.n), 0, 'no claim is left behind');
    });
  }
});

describe('schedule tools through turns', () => {
  it('create_schedule (one-shot and cron with an IANA zone), list_schedules, cancel_schedule; at most 5 active', async (t) => {
    const app: TestApp = await startTestApp(t);
    const id = await createSession(app, ['session_schedule']);
    const future = new Date(Date.now() + 3600_000).toISOString();
    const made = await runTools(app, id, [
      ['create_schedule', { name: 'later', message: 'm', scheduled_at: future }],
      ['create_schedule', { name: 'weekday', message: 'm', cron_expression: '0 9 * * 1-5', timezone: 'Europe/Paris' }],
      ['create_schedule', { name: 'bad zone', message: 'm', cron_expression: '0 9 * * *', timezone: 'Mars/Olympus' }],
      ['create_schedule', { name: 'past', message: 'm', scheduled_at: '2001-01-01T00:00:00Z' }],
    ]);
    assert.deepEqual(
      made.map((m) => m.success),
      [true, true, false, false],
    );
    assert.equal(made[1]!.result.schedule.timezone, 'Europe/Paris');
    assert.equal(made[1]!.result.schedule.kind, 'cron');
    const more = await runTools(
      app,
      id,
      [1, 2, 3, 4].map((i) => ['create_schedule', { name: `n${i}`, message: 'm', scheduled_at: future }] as [string, unknown]),
    );
    assert.equal(more.filter((m) => m.success).length, 3, 'the limit of 5 active holds even for parallel calls');
    const [list] = await runTools(app, id, [['list_schedules', {}]]);
    assert.equal(list!.result.active, 5);
    const [cancel, again] = await runTools(app, id, [
      ['cancel_schedule', { schedule_id: made[0]!.result.schedule.id }],
      ['cancel_schedule', { schedule_id: 'not-an-id' }],
    ]);
    assert.equal(cancel!.result.schedule.status, 'cancelled');
    assert.equal(again!.success, false);
    const [ok] = await runTools(app, id, [['create_schedule', { name: 'fits now', message: 'm', scheduled_at: future }]]);
    assert.equal(ok!.success, true);
  });
});

export type { TestApp };
