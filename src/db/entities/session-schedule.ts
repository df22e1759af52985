import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/**
 * A schedule of a session (`session_schedule`): one-shot or cron. The scheduler claims a due
 * row with a claim token and lease (`claimed_by`, `claim_token`, `claim_expires_at`);
 * `available_at` postpones a firing while the session is busy. Goes with its session.
 */
export const SessionSchedule = defineEntity({
  name: 'SessionSchedule',
  tableName: 'session_schedules',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    session_id: p.uuid(),
    organization_id: p.uuid(),
    name: p.text(),
    message: p.text(),
    kind: p.string().$type<'once' | 'cron'>(),
    scheduled_at: p.datetime().nullable(),
    cron_expression: p.text().nullable(),
    timezone: p.text(),
    status: p.string().$type<'active' | 'completed' | 'cancelled'>(),
    next_run_at: p.datetime().nullable(),
    last_run_at: p.datetime().nullable(),
    fire_count: p.integer(),
    claimed_by: p.text().nullable(),
    claim_token: p.uuid().nullable(),
    claim_expires_at: p.datetime().nullable(),
    available_at: p.datetime().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
