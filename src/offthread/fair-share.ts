/**
 * Fair shares of a worker pool between tenants. Jobs wait here, not in the pool: each is handed
 * on only when a worker is free, to the organisation served longest ago (one that just arrived
 * first) and, inside it, to the caller (session, user) served longest ago. An organisation may occupy at most
 * `maxRunningPerOrg` workers, so with more workers than that the others stay free for everyone
 * else however many jobs it sends; and it may have at most `maxPerOrg` jobs waiting or running
 * (one caller `maxPerKey`), so its backlog cannot fill the shared queue. Past a share the job
 * is refused at once (the caller answers 429 with Retry-After); past the shared queue (many
 * tenants at once), `busy`.
 */

/** Who a job is for: its organisation, and the caller inside it (a session, a user). */
export interface PoolTenant {
  org: string;
  key: string;
}

export interface FairShareOptions {
  /** Jobs running at once: the pool's workers. */
  slots: number;
  /** Jobs of one organisation running at once. */
  maxRunningPerOrg: number;
  /** Jobs of one organisation waiting or running. */
  maxPerOrg: number;
  /** Jobs of one caller waiting or running. */
  maxPerKey: number;
  /** Jobs waiting, all tenants together. */
  queueMax: number;
}

/** Why a job was refused before it waited. */
export type ShareRefusal = { reason: 'org' | 'key'; limit: number } | { reason: 'busy' };

export interface FairShare {
  /** Runs `job` once it is this tenant's turn; throws `refuse(...)` when the tenant is past its share. */
  run<T>(tenant: PoolTenant, job: () => Promise<T>): Promise<T>;
  /** Fails every waiting job with `err` (the pool is closing). */
  abort(err: Error): void;
  /** Jobs waiting for their turn. */
  waiting(): number;
}

interface Waiter {
  start(): void;
  fail(err: Error): void;
}

/** A caller's waiting jobs, its jobs waiting or running, and when it was last served (0: not yet). */
interface CallerQueue {
  waiters: Waiter[];
  count: number;
  served: number;
}

interface OrgShare {
  running: number;
  /** Jobs waiting or running. */
  total: number;
  /** When a job of this organisation was last handed on (0: not yet). */
  served: number;
  /** Callers with jobs waiting or running. */
  callers: Map<string, CallerQueue>;
}

/** The entry served longest ago among those `eligible` says may be served. */
function longestWaiting<T extends { served: number }>(items: Iterable<T>, eligible: (item: T) => boolean): T | undefined {
  let best: T | undefined;
  for (const item of items) if (eligible(item) && (!best || item.served < best.served)) best = item;
  return best;
}

export function createFairShare(opts: FairShareOptions, refuse: (refusal: ShareRefusal) => Error): FairShare {
  /** Organisations with jobs waiting or running. */
  const orgs = new Map<string, OrgShare>();
  let running = 0;
  let waiting = 0;

  /** Stamps each hand-over, so "served longest ago" is a comparison of numbers. */
  let turn = 0;

  function nextWaiter(): Waiter | undefined {
    const share = longestWaiting(orgs.values(), (o) => o.running < opts.maxRunningPerOrg && o.total > o.running);
    if (!share) return undefined;
    const caller = longestWaiting(share.callers.values(), (c) => c.waiters.length > 0)!;
    share.served = caller.served = ++turn;
    share.running++;
    return caller.waiters.shift();
  }

  function dispatch(): void {
    while (running < opts.slots) {
      const waiter = nextWaiter();
      if (!waiter) return;
      running++;
      waiting--;
      waiter.start();
    }
  }

  function admit(tenant: PoolTenant): OrgShare {
    const share = orgs.get(tenant.org) ?? { running: 0, total: 0, served: 0, callers: new Map() };
    const caller = share.callers.get(tenant.key) ?? { waiters: [], served: 0, count: 0 };
    if (caller.count >= opts.maxPerKey) throw refuse({ reason: 'key', limit: opts.maxPerKey });
    if (share.total >= opts.maxPerOrg) throw refuse({ reason: 'org', limit: opts.maxPerOrg });
    if (waiting >= opts.queueMax) throw refuse({ reason: 'busy' });
    share.total++;
    caller.count++;
    share.callers.set(tenant.key, caller);
    orgs.set(tenant.org, share);
    return share;
  }

  function leave(tenant: PoolTenant, share: OrgShare): void {
    share.total--;
    const caller = share.callers.get(tenant.key)!;
    if (--caller.count === 0) share.callers.delete(tenant.key);
    if (share.total === 0) orgs.delete(tenant.org);
  }

  return {
    async run(tenant, job) {
      const share = admit(tenant);
      try {
        await new Promise<void>((start, fail) => {
          share.callers.get(tenant.key)!.waiters.push({ start, fail });
          waiting++;
          dispatch();
        });
      } catch (err) {
        leave(tenant, share);
        throw err;
      }
      try {
        return await job();
      } finally {
        share.running--;
        running--;
        leave(tenant, share);
        dispatch();
      }
    },
    abort(err) {
      for (const share of orgs.values()) {
        for (const caller of share.callers.values()) for (const waiter of caller.waiters.splice(0)) waiter.fail(err);
      }
      waiting = 0;
    },
    waiting: () => waiting,
  };
}
