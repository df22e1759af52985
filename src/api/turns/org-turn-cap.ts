import { TooManyRequestsError } from '../../errors.js';

/** What a refused message tells the client to wait: turns take seconds. */
const RETRY_AFTER_S = 5;

/**
 * The operator's cap on one organisation's turns in flight (ORG_MAX_TURNS_IN_FLIGHT; issue 30
 * item 6): a new turn is refused with 429 and Retry-After while that many of its sessions run or
 * wait on one, before anything is reserved, queued or appended. A load guard, counted from the
 * session rows every instance shares: messages that pass the count at the same moment may each
 * start, so N parallel messages can exceed the cap by up to N-1 for as long as those turns last.
 */
export function createOrgTurnCap(maxPerOrg: number) {
  return {
    /** `busyInOrg`: the organisation's turns in flight, read with the session's row (session-status.ts). */
    check(busyInOrg: number): void {
      if (busyInOrg < maxPerOrg) return;
      throw new TooManyRequestsError(
        RETRY_AFTER_S,
        `Organisation limit reached: at most ${maxPerOrg} turns may run at once; retry when one has ended`,
      );
    },
  };
}

export type OrgTurnCap = ReturnType<typeof createOrgTurnCap>;
