import { type NatsConnection, connect } from '@nats-io/transport-node';
import type { NatsCluster } from '../../test/helpers/nats-server.js';
import { natsClientOptions } from '../../test/helpers/nats-server.js';

/**
 * Counts the JetStream API requests the whole deployment makes, by kind, per second: a
 * subscription on `$JS.API.>` receives a copy of every request any client sends (the servers'
 * audit advisories leave out message gets, and a cluster's consumer creates without their
 * body). Consumer creates and deletes are what a restarted node must replay from the meta group,
 * so they are the figure to watch. Opt-in (`--count-js-api`): each request is also sent here.
 */
export interface JsApiCounts {
  /** When counting began (epoch ms), to line the 10 s buckets up with the faults. */
  startedAt: number;
  seconds: number;
  /** Per kind: total, mean per second, the busiest second. */
  kinds: { kind: string; total: number; perSecond: number; peakSecond: number }[];
  /** Consumer creates + deletes per 10 s, from the start of counting. */
  consumerChurnPer10s: number[];
}

/**
 * `$JS.API.CONSUMER.CREATE.EVENTS_3.abc.evt.3.<id>` → `CONSUMER.CREATE EVENTS_N by_start_time`:
 * a consumer create also names its deliver policy (a start time: a lookup by id; a start
 * sequence: a read of many events).
 */
function kindOf(subject: string, request: string | undefined): string {
  const t = subject.split('.');
  const verb = t[3] === 'MSG' ? `${t[2]}.MSG.${t[4]}` : `${t[2]}.${t[3]}`;
  const stream = (t[3] === 'MSG' ? t[5] : t[4])?.replace(/\d+/g, 'N');
  let kind = `${verb}${stream ? ` ${stream}` : ''}`;
  if (verb === 'CONSUMER.CREATE' && request) {
    try {
      kind += ` ${(JSON.parse(request) as { config?: { deliver_policy?: string } }).config?.deliver_policy ?? ''}`;
    } catch {
      // no JSON body: the subject alone
    }
  }
  return kind;
}

/** Starts counting; every 10 s `log` gets that period's consumer creates and deletes and all calls. */
export async function countJsApi(nats: Pick<NatsCluster, 'url' | 'auth'>, log: (msg: string) => void) {
  const nc: NatsConnection = await connect(await natsClientOptions(nats, { name: 'chaos-js-api-counter', maxReconnectAttempts: -1 }));
  const t0 = Date.now();
  const perKind = new Map<string, Map<number, number>>();
  const td = new TextDecoder();
  const sub = nc.subscribe('$JS.API.>');
  void (async () => {
    for await (const m of sub) {
      const kind = kindOf(m.subject, m.subject.startsWith('$JS.API.CONSUMER.CREATE.') ? td.decode(m.data) : undefined);
      const second = Math.floor((Date.now() - t0) / 1000);
      const buckets = perKind.get(kind) ?? new Map<number, number>();
      buckets.set(second, (buckets.get(second) ?? 0) + 1);
      perKind.set(kind, buckets);
    }
  })();
  const inPeriod = (period: number, match: (kind: string) => boolean) => {
    let n = 0;
    for (const [kind, b] of perKind) if (match(kind)) for (let s = period * 10; s < period * 10 + 10; s++) n += b.get(s) ?? 0;
    return n;
  };
  const ticker = setInterval(() => {
    const p = Math.floor((Date.now() - t0) / 10_000) - 1;
    const create = inPeriod(p, (k) => k.startsWith('CONSUMER.CREATE'));
    const del = inPeriod(p, (k) => k.startsWith('CONSUMER.DELETE'));
    log(`js api, last 10 s: ${inPeriod(p, () => true)} calls, ${create} consumer creates, ${del} deletes`);
  }, 10_000);
  ticker.unref();
  return {
    async stop(): Promise<JsApiCounts> {
      clearInterval(ticker);
      await nc.drain();
      const seconds = Math.max(1, (Date.now() - t0) / 1000);
      const kinds = [...perKind].map(([kind, b]) => {
        const total = [...b.values()].reduce((a, n) => a + n, 0);
        return { kind, total, perSecond: Math.round((total / seconds) * 10) / 10, peakSecond: Math.max(...b.values()) };
      });
      kinds.sort((a, b) => b.total - a.total);
      const churn: number[] = Array.from({ length: Math.ceil(seconds / 10) }, () => 0);
      for (const [kind, b] of perKind) {
        if (!/^CONSUMER\.(CREATE|DELETE|DURABLE)/.test(kind)) continue;
        for (const [s, n] of b) churn[Math.floor(s / 10)]! += n;
      }
      return { startedAt: t0, seconds: Math.round(seconds), kinds, consumerChurnPer10s: churn };
    },
  };
}
