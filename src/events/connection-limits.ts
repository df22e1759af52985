import { TooManyRequestsError } from '../errors.js';

export interface ConnectionLimitOptions {
  perSession: number;
  perOrg: number;
  global: number;
  /** Instances behind the load balancer: global and per-org limits are divided by it (spec 8). */
  expectedInstances: number;
}

/** Counts this instance's SSE connections and refuses past the limits with 429. */
export function createConnectionLimits({ perSession, perOrg, global, expectedInstances }: ConnectionLimitOptions) {
  const orgLimit = Math.max(1, Math.floor(perOrg / expectedInstances));
  const globalLimit = Math.max(1, Math.floor(global / expectedInstances));
  const bySession = new Map<string, number>();
  const byOrg = new Map<string, number>();
  let total = 0;

  /** Takes a slot or throws TooManyRequestsError; the returned function gives it back once. */
  function acquire(orgId: string, sessionId: string): () => void {
    if (total >= globalLimit || (byOrg.get(orgId) ?? 0) >= orgLimit || (bySession.get(sessionId) ?? 0) >= perSession) {
      throw new TooManyRequestsError(1, 'Too many open streams');
    }
    bump(bySession, sessionId, 1);
    bump(byOrg, orgId, 1);
    total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      bump(bySession, sessionId, -1);
      bump(byOrg, orgId, -1);
      total--;
    };
  }

  return { acquire, total: () => total };
}

function bump(m: Map<string, number>, key: string, by: number): void {
  const n = (m.get(key) ?? 0) + by;
  if (n <= 0) m.delete(key);
  else m.set(key, n);
}

export type ConnectionLimits = ReturnType<typeof createConnectionLimits>;
