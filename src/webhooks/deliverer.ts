/**
 * This instance's delivery loop: a bounded pool (WEBHOOK_WORKERS) fed by claims on the outbox.
 * An endpoint never holds more than WEBHOOK_CONCURRENCY_PER_ENDPOINT of the pool, an
 * organisation never more than WEBHOOK_CONCURRENCY_PER_ORG (the claim skips them while full),
 * so a slow receiver delays only its own deliveries. Woken by this instance's appends, and
 * polling for the rest (other instances' appends, retries coming due, expired leases).
 */
import type { Keyring } from '../crypto/index.js';
import type { Logger } from '../log.js';
import type { ClaimedDelivery, DeliveryStore, FailureDecisions } from './delivery-store.js';
import { nextAttemptAt, shouldDisable } from './retry.js';
import { openSecret, signedHeaders } from './secrets.js';
import { sendAttempt } from './sender.js';
import { leaseMsOf, type WebhookSettings } from './settings.js';

export interface DelivererDeps {
  deliveries: DeliveryStore;
  keyring: Keyring;
  log: Logger;
  /** An endpoint the service just disabled (the outbox forgets its organisation's endpoints). */
  onDisabled(orgId: string): void;
}

const SWEEP_EVERY_MS = 60_000;

class Counts {
  private readonly m = new Map<string, number>();
  get(k: string): number {
    return this.m.get(k) ?? 0;
  }
  add(k: string, d: number): void {
    const n = this.get(k) + d;
    if (n <= 0) this.m.delete(k);
    else this.m.set(k, n);
  }
  atLeast(limit: number): string[] {
    return [...this.m].filter(([, n]) => n >= limit).map(([k]) => k);
  }
}

export function createDeliverer(deps: DelivererDeps, s: WebhookSettings) {
  const byEndpoint = new Counts();
  const byOrg = new Counts();
  const running = new Set<Promise<void>>();
  const stopping = new AbortController();
  let wakeUp: (() => void) | undefined;
  let pending = false;
  let loop: Promise<void> | undefined;
  let lastSweep = 0;
  const decide: FailureDecisions = {
    nextAttemptAt: (createdAt, now, attempt) => nextAttemptAt(createdAt, now, attempt, s),
    disable: (n, since, now) => shouldDisable(n, since, now, s),
  };

  function wake(): void {
    pending = true;
    wakeUp?.();
  }

  function secretsOf(d: ClaimedDelivery): string[] {
    const current = openSecret(deps.keyring, d.secret_encrypted, d.organization_id, d.endpoint_id, 'current');
    const overlap = d.previous_secret_encrypted && d.previous_secret_expires_at && d.previous_secret_expires_at.getTime() > Date.now();
    return overlap
      ? [current, openSecret(deps.keyring, d.previous_secret_encrypted!, d.organization_id, d.endpoint_id, 'previous')]
      : [current];
  }

  async function deliver(d: ClaimedDelivery): Promise<void> {
    const headers = signedHeaders(`msg_${d.id}`, new Date(), d.body, secretsOf(d));
    // Not cut short by stop(): an attempt under way finishes within its deadline, so a shutdown does not fail it.
    const outcome = await sendAttempt(d.url, d.body, headers, s);
    const { disabled } = await deps.deliveries.complete(d, outcome, decide);
    if (disabled) {
      deps.log.warn(
        { org_id: d.organization_id, endpoint_id: d.endpoint_id, last_error: outcome.error },
        'webhook endpoint disabled after sustained failure',
      );
      deps.onDisabled(d.organization_id);
    }
  }

  function start(d: ClaimedDelivery): void {
    byEndpoint.add(d.endpoint_id, 1);
    byOrg.add(d.organization_id, 1);
    const p = deliver(d)
      .catch((err: unknown) => deps.log.error({ err, delivery_id: d.id }, 'webhook delivery attempt could not be recorded'))
      .finally(() => {
        byEndpoint.add(d.endpoint_id, -1);
        byOrg.add(d.organization_id, -1);
        running.delete(p);
        wake();
      });
    running.add(p);
  }

  async function claimRound(): Promise<number> {
    // At most one organisation's share per claim: rows beyond an organisation's share are given back, and a
    // bigger claim than that would mostly be given back while one organisation has the backlog.
    const free = Math.min(s.workers - running.size, s.perOrg);
    if (free <= 0) return 0;
    const claimed = await deps.deliveries.claim(free, leaseMsOf(s), byEndpoint.atLeast(s.perEndpoint), byOrg.atLeast(s.perOrg));
    // A claim may bring several rows of one endpoint: start those the endpoint's share allows, give the rest back at once.
    const over: ClaimedDelivery[] = [];
    for (const d of claimed) {
      if (byEndpoint.get(d.endpoint_id) >= s.perEndpoint || byOrg.get(d.organization_id) >= s.perOrg) over.push(d);
      else start(d);
    }
    if (over.length) await deps.deliveries.release(over);
    return claimed.length - over.length;
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      pending = false;
      try {
        const n = await claimRound();
        if (Date.now() - lastSweep > SWEEP_EVERY_MS) {
          lastSweep = Date.now();
          await deps.deliveries.sweep(s.retentionMs);
        }
        if (n > 0 && running.size < s.workers) continue;
      } catch (err) {
        if (stopping.signal.aborted) break;
        deps.log.warn({ err }, 'webhook claim failed; retrying at the next poll');
      }
      if (pending) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, s.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    }
  }

  return {
    wake,
    start(): void {
      loop ??= run();
    },
    get inFlight(): number {
      return running.size;
    },
    /** Stops claiming and waits for the attempts under way (each ends within WEBHOOK_TIMEOUT_MS). */
    async stop(): Promise<void> {
      stopping.abort();
      wakeUp?.();
      await loop;
      await Promise.allSettled([...running]);
    },
  };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
