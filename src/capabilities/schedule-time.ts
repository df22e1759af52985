/** Cron arithmetic for session schedules (5-field expressions, IANA zones), shared with the scheduler. */
import { Cron } from 'croner';

/** Why a cron expression was refused, or null when it is a valid 5-field expression. */
export function cronError(expression: string, timezone: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    return `A cron expression needs exactly 5 fields (minute hour day-of-month month day-of-week); got ${fields.length}.`;
  }
  try {
    build(expression, timezone);
    return null;
  } catch (err) {
    return `Invalid cron expression: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** The first firing strictly after `after`, or null when the expression never fires again. */
export function nextCronRun(expression: string, timezone: string, after: Date): Date | null {
  return build(expression, timezone).nextRun(after);
}

function build(expression: string, timezone: string): Cron {
  // No callback and paused: croner only parses and computes, it never starts a timer.
  return new Cron(expression.trim(), { timezone, mode: '5-part', paused: true });
}
