/**
 * Fair shares of a worker pool between tenants. Jobs wait here, not in the pool: each is handed
 * on only when a worker is free, taking organisations in turn (round robin) and, inside one
 * organisation, its callers (sessions, users) in turn. An organisation may occupy at most
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

interface OrgShare {
  running: number;
  /** Jobs waiting or running. */
  total: number;
  /** Waiting jobs per caller, in turn order. */
  queues: Map<string, Waiter[]>;
  perKey: Map<string, number>;
}

/** Moves `key` to the end of the map's iteration order (its turn has been taken). */
function rotate<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
}

export function createFairShare(opts: FairShareOptions, refuse: (refusal: ShareRefusal) => Error): FairShare {
  /** Organisations with jobs waiting or running, in turn order. */
  const orgs = new Map<string, OrgShare>();
  let running = 0;
  let waiting = 0;

  function nextWaiter(): Waiter | undefined {
    for (const [org, share] of orgs) {
      if (share.running >= opts.maxRunningPerOrg) continue;
      for (const [key, queue] of share.queues) {
        const waiter = queue.shift()!;
        if (queue.length > 0) rotate(share.queues, key, queue);
        else share.queues.delete(key);
        rotate(orgs, org, share);
        share.running++;
        return waiter;
      }
    }
    return undefined;
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
    const share = orgs.get(tenant.org) ?? { running: 0, total: 0, queues: new Map(), perKey: new Map() };
    const keyCount = share.perKey.get(tenant.key) ?? 0;
    if (keyCount >= opts.maxPerKey) throw refuse({ reason: 'key', limit: opts.maxPerKey });
    if (share.total >= opts.maxPerOrg) throw refuse({ reason: 'org', limit: opts.maxPerOrg });
    if (waiting >= opts.queueMax) throw refuse({ reason: 'busy' });
    share.total++;
    share.perKey.set(tenant.key, keyCount + 1);
    orgs.set(tenant.org, share);
    return share;
  }

  function leave(tenant: PoolTenant, share: OrgShare): void {
    share.total--;
    const left = (share.perKey.get(tenant.key) ?? 1) - 1;
    if (left > 0) share.perKey.set(tenant.key, left);
    else share.perKey.delete(tenant.key);
    if (share.total === 0) orgs.delete(tenant.org);
  }

  return {
    async run(tenant, job) {
      const share = admit(tenant);
      try {
        await new Promise<void>((start, fail) => {
          const queue = share.queues.get(tenant.key) ?? [];
          queue.push({ start, fail });
          share.queues.set(tenant.key, queue);
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
        for (const queue of share.queues.values()) for (const waiter of queue.splice(0)) waiter.fail(err);
        share.queues.clear();
      }
      waiting = 0;
    },
    waiting: () => waiting,
  };
}
