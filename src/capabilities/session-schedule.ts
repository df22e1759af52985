import { Type } from '@sinclair/typebox';
import { defineCapability, defineTool, jsonResult } from './define.js';
import { cronError, nextCronRun } from './schedule-time.js';
import type { CreateScheduleInput } from './storage-ports.js';
import { isValidTimeZone, parseDateTimeInZone } from './time-zone.js';
import { ToolError } from './types.js';

export const SESSION_SCHEDULE_ID = 'session_schedule';
/** Active schedules per session. */
export const MAX_ACTIVE_SCHEDULES = 5;

const createSchedule = defineTool({
  name: 'create_schedule',
  display_name: 'Create Schedule',
  description: [
    'Schedules a message to be sent to this session later, which starts a new turn for you.',
    'Give either scheduled_at (one-shot) or cron_expression (recurring, 5 fields: minute hour day-of-month month day-of-week).',
    `At most ${MAX_ACTIVE_SCHEDULES} schedules can be active.`,
  ].join(' '),
  parameters: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200, description: 'A short label, e.g. "daily report".' }),
      message: Type.String({ minLength: 1, maxLength: 10000, description: 'The instruction you will receive when it fires.' }),
      scheduled_at: Type.Optional(
        Type.String({
          maxLength: 64,
          description: 'One-shot: ISO 8601 date-time, e.g. "2026-05-01T09:00:00Z"; without an offset it is read in `timezone`.',
        }),
      ),
      cron_expression: Type.Optional(
        Type.String({ maxLength: 256, description: 'Recurring: 5-field cron, e.g. "0 9 * * 1-5" (09:00 on weekdays).' }),
      ),
      timezone: Type.Optional(
        Type.String({ maxLength: 64, description: 'IANA time zone for cron_expression and offset-less scheduled_at. Default: UTC.' }),
      ),
    },
    { additionalProperties: false },
  ),
  async run(args, { schedules, now }) {
    const input = scheduleInput(args, now());
    const active = (await schedules.list()).filter((s) => s.status === 'active').length;
    if (active >= MAX_ACTIVE_SCHEDULES) {
      throw new ToolError(`${active} schedules are already active (maximum ${MAX_ACTIVE_SCHEDULES}). Cancel one first.`);
    }
    return jsonResult({ schedule: await schedules.create(input) });
  },
});

interface ScheduleArgs {
  name: string;
  message: string;
  scheduled_at?: string;
  cron_expression?: string;
  timezone?: string;
}

/** Validates the arguments and computes the first run; throws ToolError with a fix-it message. */
export function scheduleInput(args: ScheduleArgs, now: Date): CreateScheduleInput {
  const timezone = args.timezone?.trim() || 'UTC';
  if (!isValidTimeZone(timezone)) throw new ToolError(`Unknown time zone "${timezone}". Use an IANA name such as "Europe/Paris".`);
  const hasAt = args.scheduled_at !== undefined && args.scheduled_at.trim() !== '';
  const hasCron = args.cron_expression !== undefined && args.cron_expression.trim() !== '';
  if (hasAt === hasCron) throw new ToolError('Give exactly one of scheduled_at (one-shot) or cron_expression (recurring).');
  const base = { name: args.name, message: args.message, timezone, max_active: MAX_ACTIVE_SCHEDULES };
  if (hasAt) {
    const at = parseDateTimeInZone(args.scheduled_at!, timezone);
    if (!at) throw new ToolError(`scheduled_at "${args.scheduled_at}" is not an ISO 8601 date-time such as 2026-05-01T09:00:00Z.`);
    if (at.getTime() <= now.getTime()) {
      throw new ToolError(`scheduled_at ${at.toISOString()} is in the past (now is ${now.toISOString()}).`);
    }
    const iso = at.toISOString();
    return { ...base, kind: 'once', scheduled_at: iso, cron_expression: null, next_run_at: iso };
  }
  const cron = args.cron_expression!.trim().split(/\s+/).join(' ');
  const problem = cronError(cron, timezone);
  if (problem) throw new ToolError(problem);
  const next = nextCronRun(cron, timezone, now);
  if (!next) throw new ToolError(`cron_expression "${cron}" never fires.`);
  return { ...base, kind: 'cron', scheduled_at: null, cron_expression: cron, next_run_at: next.toISOString() };
}

const cancelSchedule = defineTool({
  name: 'cancel_schedule',
  display_name: 'Cancel Schedule',
  description: 'Cancels an active schedule by id (see list_schedules).',
  parameters: Type.Object(
    { schedule_id: Type.String({ minLength: 1, description: 'The id returned by create_schedule or list_schedules.' }) },
    { additionalProperties: false },
  ),
  async run({ schedule_id }, { schedules }) {
    return jsonResult({ schedule: await schedules.cancel(schedule_id) });
  },
});

const listSchedules = defineTool({
  name: 'list_schedules',
  display_name: 'List Schedules',
  description: "Lists this session's active schedules (with include_inactive, also completed and cancelled ones).",
  parameters: Type.Object(
    { include_inactive: Type.Optional(Type.Boolean({ description: 'Also list completed and cancelled schedules. Default false.' })) },
    { additionalProperties: false },
  ),
  async run({ include_inactive }, { schedules }) {
    const list = await schedules.list({ include_inactive: include_inactive === true });
    const active = list.filter((s) => s.status === 'active').length;
    return jsonResult({ schedules: list, active, max_active: MAX_ACTIVE_SCHEDULES });
  },
});

export const sessionScheduleCapability = defineCapability({
  id: SESSION_SCHEDULE_ID,
  name: 'Session Schedules',
  description: 'Lets the agent schedule future messages to its own session: one-shot or recurring (cron) in any IANA time zone.',
  prompt: [
    'You can schedule work for later: `create_schedule` sends this session a message at a given time',
    '(scheduled_at) or on a recurring cron schedule (cron_expression + timezone), which starts a new turn for you.',
    'Write the message as an instruction to your future self with all context needed.',
    `At most ${MAX_ACTIVE_SCHEDULES} schedules can be active; use list_schedules and cancel_schedule to manage them.`,
    'Call get_current_time first when you need the current time to compute a date.',
  ].join(' '),
  tools: [createSchedule, cancelSchedule, listSchedules],
  configSchema: Type.Object({}, { additionalProperties: false }),
  features: ['schedules'],
  // Computing "tomorrow at 9" needs the current time, so the clock comes along.
  dependencies: ['current_time'],
});
