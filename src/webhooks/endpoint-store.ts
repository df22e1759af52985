/** The `webhook_endpoints` table: an organisation's endpoints, their sealed secrets and failure counters. */
import type { WebhookEndpointView, WebhookFilterValue } from '../../schemas/webhooks.js';
import type { Store } from '../db/index.js';
import { ForbiddenError, NotFoundError, QuotaExceededError } from '../errors.js';
import { inTransaction, iso, isoOrNull, lockKey } from '../session-storage/index.js';
import type { EndpointSubscription } from './matching.js';

type Db = Pick<Store, 'em' | 'sql'>;

interface Row {
  id: string;
  organization_id: string;
  url: string;
  description: string;
  event_types: unknown;
  filter: unknown;
  status: string;
  disabled_reason: string | null;
  disabled_at: unknown;
  consecutive_failures: number;
  previous_secret_expires_at: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const VIEW_COLUMNS = `id, organization_id, url, description, event_types, filter, status, disabled_reason, disabled_at,
  consecutive_failures, previous_secret_expires_at, created_at, updated_at`;

const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;

function view(r: Row): WebhookEndpointView {
  return {
    id: r.id,
    organization_id: r.organization_id,
    url: r.url,
    description: r.description,
    event_types: json<string[]>(r.event_types),
    filter: json<WebhookFilterValue>(r.filter),
    status: r.status === 'disabled' ? 'disabled' : 'active',
    disabled_reason: r.disabled_reason,
    disabled_at: isoOrNull(r.disabled_at),
    consecutive_failures: Number(r.consecutive_failures),
    previous_secret_expires_at: isoOrNull(r.previous_secret_expires_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export interface NewEndpoint {
  id: string;
  url: string;
  description: string;
  event_types: readonly string[];
  filter: WebhookFilterValue;
  sealedSecret: string;
}

export interface EndpointChange {
  url?: string;
  description?: string;
  event_types?: readonly string[];
  filter?: WebhookFilterValue;
  status?: 'active' | 'disabled';
}

export function createEndpointStore(db: Db, { maxPerOrg }: { maxPerOrg: number }) {
  async function get(orgId: string, id: string): Promise<WebhookEndpointView> {
    const [row] = await db.sql<Row>(`select ${VIEW_COLUMNS} from webhook_endpoints where organization_id = ? and id = ?`, [orgId, id]);
    if (!row) throw new NotFoundError();
    return view(row);
  }

  return {
    get,
    /** 404 for an unknown endpoint, 403 for another organisation's (docs/decisions/0018-member-admin-matrix.md). */
    async assertOwned(orgId: string, id: string): Promise<void> {
      const [row] = await db.sql<{ organization_id: string }>('select organization_id from webhook_endpoints where id = ?', [id]);
      if (!row) throw new NotFoundError();
      if (row.organization_id !== orgId) throw new ForbiddenError();
    },
    async list(orgId: string): Promise<WebhookEndpointView[]> {
      const rows = await db.sql<Row>(`select ${VIEW_COLUMNS} from webhook_endpoints where organization_id = ? order by created_at, id`, [
        orgId,
      ]);
      return rows.map(view);
    },

    /** Inserts the endpoint unless the organisation holds `maxPerOrg` already (locked, so two creates cannot both pass). */
    async insert(orgId: string, e: NewEndpoint): Promise<WebhookEndpointView> {
      return inTransaction(db, async (q) => {
        await lockKey(q, `webhook_endpoints:${orgId}`);
        const [{ n } = { n: 0 }] = await q<{ n: number }>('select count(*)::int as n from webhook_endpoints where organization_id = ?', [
          orgId,
        ]);
        if (Number(n) >= maxPerOrg)
          throw new QuotaExceededError('count', `Webhook endpoint quota reached: an organisation holds at most ${maxPerOrg} endpoints`);
        const [row] = await q<Row>(
          `insert into webhook_endpoints (id, organization_id, url, description, event_types, filter, secret_encrypted)
           values (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?) returning ${VIEW_COLUMNS}`,
          [e.id, orgId, e.url, e.description, JSON.stringify(e.event_types), JSON.stringify(e.filter), e.sealedSecret],
        );
        return view(row!);
      });
    },

    /** Applies the change; re-enabling clears the failure state so the endpoint gets a fresh start. */
    async update(orgId: string, id: string, c: EndpointChange): Promise<WebhookEndpointView> {
      const [row] = await db.sql<Row>(
        `update webhook_endpoints set
           url = coalesce(cast(? as text), url), description = coalesce(cast(? as text), description),
           event_types = coalesce(?::jsonb, event_types), filter = coalesce(?::jsonb, filter),
           status = coalesce(cast(? as text), status),
           disabled_reason = case when cast(? as text) is null then disabled_reason else null end,
           disabled_at = case when cast(? as text) = 'disabled' then coalesce(disabled_at, now()) when cast(? as text) = 'active' then null else disabled_at end,
           consecutive_failures = case when cast(? as text) = 'active' then 0 else consecutive_failures end,
           failing_since = case when cast(? as text) = 'active' then null else failing_since end,
           updated_at = now()
         where organization_id = ? and id = ? returning ${VIEW_COLUMNS}`,
        [
          c.url ?? null,
          c.description ?? null,
          c.event_types ? JSON.stringify(c.event_types) : null,
          c.filter ? JSON.stringify(c.filter) : null,
          c.status ?? null,
          c.status ?? null,
          c.status ?? null,
          c.status ?? null,
          c.status ?? null,
          c.status ?? null,
          orgId,
          id,
        ],
      );
      if (!row) throw new NotFoundError();
      return view(row);
    },

    async remove(orgId: string, id: string): Promise<void> {
      const rows = await db.sql('delete from webhook_endpoints where organization_id = ? and id = ? returning id', [orgId, id]);
      if (!rows.length) throw new NotFoundError();
    },

    /** Makes `sealedNew` the secret and keeps the current one (re-sealed for its slot) until `previousUntil`. */
    async rotate(
      orgId: string,
      id: string,
      reseal: (current: string) => { sealedNew: string; sealedPrevious: string },
      previousUntil: Date,
    ) {
      return inTransaction(db, async (q) => {
        const [cur] = await q<{ secret_encrypted: string }>(
          'select secret_encrypted from webhook_endpoints where organization_id = ? and id = ? for update',
          [orgId, id],
        );
        if (!cur) throw new NotFoundError();
        const { sealedNew, sealedPrevious } = reseal(cur.secret_encrypted);
        await q(
          `update webhook_endpoints set secret_encrypted = ?, previous_secret_encrypted = ?, previous_secret_expires_at = ?, updated_at = now()
           where id = ?`,
          [sealedNew, sealedPrevious, previousUntil.toISOString(), id],
        );
      });
    },

    /** Whether any organisation has an active endpoint: without one, no event needs its session read. */
    async anyActive(): Promise<boolean> {
      const [row] = await db.sql<{ found: boolean }>(`select exists (select 1 from webhook_endpoints where status = 'active') as found`);
      return row?.found === true;
    },

    /** What the outbox matches events against: the organisation's active endpoints. */
    async subscriptions(orgId: string): Promise<EndpointSubscription[]> {
      const rows = await db.sql<{ id: string; event_types: unknown; filter: unknown; created_at: unknown }>(
        `select id, event_types, filter, created_at from webhook_endpoints where organization_id = ? and status = 'active'`,
        [orgId],
      );
      return rows.map((r) => ({
        id: r.id,
        event_types: json<string[]>(r.event_types),
        filter: json<WebhookFilterValue>(r.filter),
        since: Date.parse(iso(r.created_at)),
      }));
    },
  };
}

export type EndpointStore = ReturnType<typeof createEndpointStore>;
