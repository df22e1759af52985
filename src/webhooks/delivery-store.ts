/**
 * The delivery outbox (`webhook_deliveries`) and its attempt log (`webhook_attempts`). Rows are
 * written when a matching event is appended (outbox.ts) and claimed by any instance's deliverer
 * under a lease with SKIP LOCKED, so two instances never hold the same delivery at once and a
 * killed instance's claim is taken over once its lease has run out.
 */
import type { WebhookAttemptView, WebhookDeliveryState, WebhookDeliveryView } from '../../schemas/webhooks.js';
import { preparedSql, type Store } from '../db/index.js';
import { NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import { inTransaction, iso, isoOrNull } from '../session-storage/index.js';

type Db = Pick<Store, 'em' | 'sql'>;

export interface NewDelivery {
  /** Set by callers that answer the row (test sends); minted otherwise. */
  id?: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  sequence: number;
  payload: unknown;
}

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  organization_id: string;
  session_id: string | null;
  body: string;
  attempt: number;
  created_at: Date;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
}

export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  latencyMs: number;
  error: string | null;
  startedAt: Date;
}

/** After a failed attempt: when the next one is due (null: give up), and whether the endpoint's run of failures disables it. */
export interface FailureDecisions {
  nextAttemptAt(createdAt: Date, now: Date, attempt: number): Date | null;
  disable(consecutiveFailures: number, failingSince: Date, now: Date): boolean;
}

const DELIVERY_COLUMNS = `id, endpoint_id, session_id, event_id, event_type, state, attempts, next_attempt_at, last_status, last_error, created_at, delivered_at`;

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  session_id: string | null;
  event_id: string;
  event_type: string;
  state: string;
  attempts: number;
  next_attempt_at: unknown;
  last_status: number | null;
  last_error: string | null;
  created_at: unknown;
  delivered_at: unknown;
}

function deliveryView(r: DeliveryRow): WebhookDeliveryView {
  return {
    id: r.id,
    endpoint_id: r.endpoint_id,
    session_id: r.session_id,
    event_id: r.event_id,
    event_type: r.event_type,
    state: r.state as WebhookDeliveryState,
    attempts: Number(r.attempts),
    next_attempt_at: iso(r.next_attempt_at),
    last_status: r.last_status === null ? null : Number(r.last_status),
    last_error: r.last_error,
    created_at: iso(r.created_at),
    delivered_at: isoOrNull(r.delivered_at),
  };
}

/** Ids as one JSON parameter (one statement text whatever their number). */
const idSet = (column: string) => `${column} in (select (jsonb_array_elements_text(?::jsonb))::uuid)`;

/**
 * The claim. `heads` is the oldest pending row of each (endpoint, session) — one group per row
 * for deliveries without a session (test-sends) — read in one pass in index order; only heads
 * are claimable, which keeps a session's deliveries in sequence order. (A first version tested
 * "no earlier pending row" per candidate with NOT EXISTS: the planner made that quadratic, over
 * a second for 2,300 pending rows; so is a `heads` CTE the planner inlines and re-sorts per
 * row while its statistics lag: hence MATERIALIZED.) Locked rows are skipped, a row claimed since the snapshot is
 * re-checked under its lock (lease, state).
 */
const CLAIM = preparedSql(
  'webhook-deliveries.claim',
  `with heads as materialized (
    select distinct on (endpoint_id, coalesce(session_id, id)) id from webhook_deliveries
    where state = 'pending' order by endpoint_id, coalesce(session_id, id), sequence),
  due as (
    select c.id from heads h join webhook_deliveries c on c.id = h.id join webhook_endpoints e on e.id = c.endpoint_id
    where c.state = 'pending' and c.next_attempt_at <= now() and (c.lease_until is null or c.lease_until < now())
      and e.status = 'active' and not ${idSet('c.endpoint_id')} and not ${idSet('c.organization_id')}
    order by c.next_attempt_at, c.sequence limit ? for update of c skip locked)
  update webhook_deliveries d set lease_until = now() + (?::int * interval '1 millisecond'), lease_owner = ?, attempts = d.attempts + 1, updated_at = now()
  from due, webhook_endpoints e where d.id = due.id and e.id = d.endpoint_id
  returning d.id, d.endpoint_id, d.organization_id, d.session_id, d.payload::text as body, d.attempts, d.created_at,
    e.url, e.secret_encrypted, e.previous_secret_encrypted, e.previous_secret_expires_at`,
);

/** A success in one statement (no transaction round trips): the attempt, the delivery, the endpoint's failure run reset. */
const DELIVERED = preparedSql(
  'webhook-deliveries.delivered',
  `with attempt as (
     insert into webhook_attempts (id, delivery_id, attempt, started_at, status, latency_ms, error, instance_id)
     values (?::uuid, ?::uuid, ?::int, ?::timestamptz, ?::int, ?::int, null, ?) returning 1),
   delivery as (
     update webhook_deliveries set state = 'delivered', delivered_at = now(), lease_until = null, lease_owner = null,
       last_status = ?::int, last_error = null, updated_at = now()
     where id = ?::uuid and lease_owner = ? and attempts = ?::int returning 1),
   endpoint as (
     update webhook_endpoints set consecutive_failures = 0, failing_since = null where id = ?::uuid and consecutive_failures > 0 returning 1)
   select (select count(*) from attempt)::int as attempts`,
);

export function createDeliveryStore(db: Db, { instanceId }: { instanceId: string }) {
  return {
    /**
     * Queues deliveries of one session's events; an event already queued for an endpoint is not
     * queued again (a retried append). Nothing is queued while the organisation has `maxPending`
     * deliveries waiting; answers how many rows were written and whether the quota refused them.
     */
    async enqueue(orgId: string, sessionId: string | null, rows: NewDelivery[], maxPending: number) {
      const items = rows.map((r) => ({ ...r, id: r.id ?? newId() }));
      const [res] = await db.sql<{ pending: number; inserted: number }>(
        `with pending as (select count(*)::int as n from webhook_deliveries where organization_id = ? and state = 'pending'),
         ins as (
           insert into webhook_deliveries (id, endpoint_id, organization_id, session_id, event_id, event_type, sequence, payload)
           select (r->>'id')::uuid, (r->>'endpoint_id')::uuid, ?::uuid, ?::uuid, (r->>'event_id')::uuid, r->>'event_type', (r->>'sequence')::int, r->'payload'
           from jsonb_array_elements(?::jsonb) r, pending where pending.n < ?
           on conflict (endpoint_id, event_id) do nothing returning 1)
         select (select n from pending) as pending, (select count(*) from ins)::int as inserted`,
        [orgId, orgId, sessionId, JSON.stringify(items), maxPending],
      );
      return { inserted: Number(res?.inserted ?? 0), refused: Number(res?.pending ?? 0) >= maxPending };
    },

    /** Claims up to `limit` due deliveries, each the oldest pending one of its (endpoint, session), skipping full endpoints and organisations. */
    async claim(limit: number, leaseMs: number, skipEndpoints: readonly string[], skipOrgs: readonly string[]): Promise<ClaimedDelivery[]> {
      if (limit <= 0) return [];
      const rows = await db.sql<Omit<ClaimedDelivery, 'attempt'> & { attempts: number }>(CLAIM, [
        JSON.stringify(skipEndpoints),
        JSON.stringify(skipOrgs),
        limit,
        leaseMs,
        instanceId,
      ]);
      return rows.map((r) => ({
        ...r,
        attempt: Number(r.attempts),
        created_at: new Date(r.created_at),
        previous_secret_expires_at: r.previous_secret_expires_at ? new Date(r.previous_secret_expires_at) : null,
      }));
    },

    /** Gives claimed deliveries back untried (the endpoint or organisation had no room), as if never claimed. */
    async release(claims: readonly ClaimedDelivery[]): Promise<void> {
      const items = claims.map((c) => ({ id: c.id, attempt: c.attempt }));
      await db.sql(
        `update webhook_deliveries d set lease_until = null, lease_owner = null, attempts = d.attempts - 1
         from jsonb_array_elements(?::jsonb) r
         where d.id = (r->>'id')::uuid and d.attempts = (r->>'attempt')::int and d.lease_owner = ?`,
        [JSON.stringify(items), instanceId],
      );
    },

    /**
     * Records the attempt and moves the delivery on (delivered, due again later, or failed for
     * good) — only while this instance's claim is still the delivery's (a takeover wins). Answers
     * whether the endpoint was disabled by this failure.
     */
    async complete(claim: ClaimedDelivery, out: AttemptOutcome, decide: FailureDecisions): Promise<{ disabled: boolean }> {
      if (out.ok) {
        await db.sql(DELIVERED, [
          newId(),
          claim.id,
          claim.attempt,
          out.startedAt.toISOString(),
          out.status,
          Math.round(out.latencyMs),
          instanceId,
          out.status,
          claim.id,
          instanceId,
          claim.attempt,
          claim.endpoint_id,
        ]);
        return { disabled: false };
      }
      const now = new Date();
      return inTransaction(db, async (q) => {
        await q(
          `insert into webhook_attempts (id, delivery_id, attempt, started_at, status, latency_ms, error, instance_id) values (?, ?, ?, ?, ?, ?, ?, ?)`,
          [newId(), claim.id, claim.attempt, out.startedAt.toISOString(), out.status, Math.round(out.latencyMs), out.error, instanceId],
        );
        const mine = `where id = ? and lease_owner = ? and attempts = ?`;
        const fence = [claim.id, instanceId, claim.attempt];
        const next = decide.nextAttemptAt(claim.created_at, now, claim.attempt);
        await q(
          `update webhook_deliveries set state = ?, next_attempt_at = coalesce(?::timestamptz, next_attempt_at), lease_until = null,
             lease_owner = null, last_status = ?, last_error = ?, updated_at = now() ${mine}`,
          [next ? 'pending' : 'failed', next?.toISOString() ?? null, out.status, out.error, ...fence],
        );
        const [ep] = await q<{ consecutive_failures: number; failing_since: unknown; status: string }>(
          `update webhook_endpoints set consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, now())
           where id = ? returning consecutive_failures, failing_since, status`,
          [claim.endpoint_id],
        );
        if (ep?.status !== 'active' || !decide.disable(Number(ep.consecutive_failures), new Date(iso(ep.failing_since)), now)) {
          return { disabled: false };
        }
        const reason = `disabled after ${ep.consecutive_failures} failed attempts in a row since ${iso(ep.failing_since)} (last: ${out.error ?? `HTTP ${out.status}`})`;
        await q(
          `update webhook_endpoints set status = 'disabled', disabled_reason = ?, disabled_at = now(), updated_at = now() where id = ?`,
          [reason, claim.endpoint_id],
        );
        return { disabled: true };
      });
    },

    async list(orgId: string, endpointId: string, query: { state?: WebhookDeliveryState; offset: number; limit: number }) {
      const where = `where organization_id = ? and endpoint_id = ?${query.state ? ' and state = ?' : ''}`;
      const params = [orgId, endpointId, ...(query.state ? [query.state] : [])];
      const [rows, [count]] = await Promise.all([
        db.sql<DeliveryRow>(
          `select ${DELIVERY_COLUMNS} from webhook_deliveries ${where} order by created_at desc, id desc limit ? offset ?`,
          [...params, query.limit, query.offset],
        ),
        db.sql<{ n: number }>(`select count(*)::int as n from webhook_deliveries ${where}`, params),
      ]);
      return { data: rows.map(deliveryView), total: Number(count?.n ?? 0), offset: query.offset, limit: query.limit };
    },

    async get(
      orgId: string,
      endpointId: string,
      deliveryId: string,
    ): Promise<{ delivery: WebhookDeliveryView; attempts: WebhookAttemptView[] }> {
      const [row] = await db.sql<DeliveryRow>(
        `select ${DELIVERY_COLUMNS} from webhook_deliveries where organization_id = ? and endpoint_id = ? and id = ?`,
        [orgId, endpointId, deliveryId],
      );
      if (!row) throw new NotFoundError();
      const attempts = await db.sql<{
        attempt: number;
        started_at: unknown;
        status: number | null;
        latency_ms: number;
        error: string | null;
      }>('select attempt, started_at, status, latency_ms, error from webhook_attempts where delivery_id = ? order by attempt, started_at', [
        deliveryId,
      ]);
      return {
        delivery: deliveryView(row),
        attempts: attempts.map((a) => ({
          attempt: Number(a.attempt),
          started_at: iso(a.started_at),
          status: a.status === null ? null : Number(a.status),
          latency_ms: Number(a.latency_ms),
          error: a.error,
        })),
      };
    },

    /** Puts a delivery back in the queue, due now (a delivery being attempted right now is left to finish). */
    async redeliver(orgId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryView> {
      const [row] = await db.sql<DeliveryRow>(
        `update webhook_deliveries set state = 'pending', next_attempt_at = now(), updated_at = now()
         where organization_id = ? and endpoint_id = ? and id = ? and (lease_until is null or lease_until < now())
         returning ${DELIVERY_COLUMNS}`,
        [orgId, endpointId, deliveryId],
      );
      if (row) return deliveryView(row);
      // Absent (404), or in flight right now: then it is answered as it stands.
      return (await this.get(orgId, endpointId, deliveryId)).delivery;
    },

    /** Drops finished deliveries (and, by cascade, their attempts) older than `retentionMs`, a page at a time. */
    async sweep(retentionMs: number): Promise<number> {
      const rows = await db.sql(
        `delete from webhook_deliveries where id in (
           select id from webhook_deliveries where state <> 'pending' and updated_at < now() - (?::bigint * interval '1 millisecond') limit 1000)
         returning 1`,
        [retentionMs],
      );
      return rows.length;
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
