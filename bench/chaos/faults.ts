import type { FaultKind, FaultRecord } from './audit.js';
import type { Cluster, Instance } from './cluster.js';
import type { Workload } from './workload.js';
import type { NatsServer } from '../../test/helpers/nats-server.js';
import { serviceConnections } from '../lib/nats-connz.js';

/**
 * The faults, one at a time (issue 13): SIGKILL of an instance while one of its turns streams
 * from the LLM or while one of its tools runs, SIGTERM of the busiest instance, SIGKILL of a NATS
 * node (restarted after `NATS_DOWN_MS`), PostgreSQL stopped for `PG_DOWN_MS`. A killed or
 * stopped instance is restarted at once, as an orchestrator would. Each returns the record the
 * audit measures against; requests until `SETTLE_MS` after healing count as inside the window.
 * Stalls (issue 32): an instance frozen (SIGSTOP) mid-tool, and a NATS node frozen, each for
 * FREEZE_MIN_MS-FREEZE_MAX_MS and then woken (SIGCONT), as a GC pause, a VM steal or a healed
 * partition does.
 */
export const FREEZE_MIN_MS = 15_000;
export const FREEZE_MAX_MS = 20_000;
const HEALTH_SAMPLE_MS = 1_000;
/**
 * How long a sample waits for /health: its own bound (2 s) and a margin. At 1 s, answers the
 * instances logged as 200 within 0.3 s counted as unhealthy when this process (the workload and
 * every SSE follower) read them late.
 */
const HEALTH_TIMEOUT_MS = 2_500;
export const NATS_DOWN_MS = 5_000;
export const PG_DOWN_MS = 10_000;
export const SETTLE_MS = 10_000;
/** How long to wait for a turn in the wanted phase on a live instance before taking any busy one. */
const FIND_VICTIM_MS = 20_000;

export interface FaultContext {
  cluster: Cluster;
  workload: Workload;
  log: (msg: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Running sessions whose turn the instance claimed last. */
function runningOn(ctx: FaultContext, inst: Instance): string[] {
  return ctx.workload.running().filter((id) => ctx.cluster.claims.get(id) === inst.name);
}

/** The instance holding a running turn whose last event is `phase` (polled), or null. */
async function instanceIn(ctx: FaultContext, phase: string): Promise<{ inst: Instance; session: string } | null> {
  const deadline = Date.now() + FIND_VICTIM_MS;
  while (Date.now() < deadline) {
    for (const id of ctx.workload.running()) {
      if (ctx.workload.lastType(id) !== phase) continue;
      const inst = ctx.cluster.instances.find((i) => i.name === ctx.cluster.claims.get(id) && i.alive());
      if (inst) return { inst, session: id };
    }
    await sleep(20);
  }
  return null;
}

function busiest(ctx: FaultContext): Instance {
  const live = ctx.cluster.instances.filter((i) => i.alive());
  return live.reduce((a, b) => (runningOn(ctx, b).length > runningOn(ctx, a).length ? b : a));
}

async function instanceFault(ctx: FaultContext, kind: FaultKind, repetition: number): Promise<FaultRecord> {
  let inst: Instance;
  let note: string | undefined;
  if (kind === 'term') inst = busiest(ctx);
  else {
    const phase = kind === 'kill-llm' ? 'output.message.delta' : 'tool.started';
    const found = await instanceIn(ctx, phase);
    if (found) {
      inst = found.inst;
      note = `session ${found.session} in ${phase}`;
    } else {
      inst = busiest(ctx);
      note = `no turn seen in ${phase} within ${FIND_VICTIM_MS} ms: killed the busiest instance`;
    }
  }
  const affectedSessions = runningOn(ctx, inst);
  const injectedAt = Date.now();
  await inst.signal(kind === 'term' ? 'SIGTERM' : 'SIGKILL');
  const exitMs = Date.now() - injectedAt;
  if (kind === 'term') note = `exited ${exitMs} ms after SIGTERM`;
  const restartToHealthyMs = await inst.start();
  const healedAt = Date.now();
  ctx.log(`${kind} #${repetition}: ${inst.name} (${affectedSessions.length} running turns), back in ${restartToHealthyMs} ms`);
  return {
    kind,
    repetition,
    target: inst.name,
    injectedAt,
    healedAt,
    windowEnd: healedAt + SETTLE_MS,
    affectedSessions,
    restartToHealthyMs,
    ...(note ? { note } : {}),
  };
}

async function natsFault(ctx: FaultContext, repetition: number): Promise<FaultRecord> {
  const node = ctx.cluster.nats.servers[(repetition - 1) % ctx.cluster.nats.servers.length]!;
  const affectedSessions = ctx.workload.running();
  const injectedAt = Date.now();
  await ctx.cluster.killNatsNode(node);
  await sleep(NATS_DOWN_MS);
  const t0 = Date.now();
  await node.restart();
  const healedAt = Date.now();
  ctx.log(`nats-kill #${repetition}: ${node.name} down ${NATS_DOWN_MS} ms, healthy ${healedAt - t0} ms after its restart`);
  return {
    kind: 'nats-kill',
    repetition,
    target: node.name,
    injectedAt,
    healedAt,
    windowEnd: healedAt + SETTLE_MS,
    affectedSessions,
    restartToHealthyMs: healedAt - t0,
  };
}

async function pgFault(ctx: FaultContext, repetition: number): Promise<FaultRecord> {
  const affectedSessions = ctx.workload.running();
  const injectedAt = Date.now();
  await ctx.cluster.pg.stop();
  await sleep(Math.max(0, PG_DOWN_MS - (Date.now() - injectedAt)));
  const t0 = Date.now();
  await ctx.cluster.pg.start();
  const healedAt = Date.now();
  ctx.log(`pg-stop #${repetition}: down ${t0 - injectedAt} ms`);
  return {
    kind: 'pg-stop',
    repetition,
    target: 'postgres',
    injectedAt,
    healedAt,
    windowEnd: healedAt + SETTLE_MS,
    affectedSessions,
    restartToHealthyMs: healedAt - t0,
  };
}

const freezeMs = () => FREEZE_MIN_MS + Math.round(Math.random() * (FREEZE_MAX_MS - FREEZE_MIN_MS));

/** An instance frozen while one of its tools runs, then woken; nothing restarts it. */
async function freezeInstanceFault(ctx: FaultContext, repetition: number): Promise<FaultRecord> {
  const found = await instanceIn(ctx, 'tool.started');
  const inst = found?.inst ?? busiest(ctx);
  const note = found
    ? `session ${found.session} in tool.started`
    : `no turn seen in tool.started within ${FIND_VICTIM_MS} ms: the busiest instance`;
  const affectedSessions = runningOn(ctx, inst);
  const ms = freezeMs();
  const injectedAt = Date.now();
  await inst.freeze(ms);
  const healedAt = Date.now();
  ctx.log(`freeze-instance #${repetition}: ${inst.name} (${affectedSessions.length} running turns) frozen ${ms} ms`);
  return {
    kind: 'freeze-instance',
    repetition,
    target: inst.name,
    injectedAt,
    healedAt,
    windowEnd: healedAt + SETTLE_MS,
    affectedSessions,
    restartToHealthyMs: null,
    note: `${note}; frozen ${ms} ms`,
  };
}

/**
 * A NATS node frozen, then woken: the node most instances are connected to (a node nats-kill
 * restarted has none: its clients moved away), so that the run sees both sides of issue 32
 * item 2 — the instances on the frozen node, and the others, whose /health must stay 200.
 */
async function freezeNatsFault(ctx: FaultContext, repetition: number): Promise<FaultRecord> {
  const servers = ctx.cluster.nats.servers;
  const clients = await Promise.all(servers.map((n) => instancesOn(n)));
  const busiestNode = clients.reduce((best, c, i) => (c.size > clients[best]!.size ? i : best), (repetition - 1) % servers.length);
  const node = servers[busiestNode]!;
  const onNode = clients[busiestNode]!;
  const affectedSessions = ctx.workload.running();
  const ms = freezeMs();
  const injectedAt = Date.now();
  const sampling = sampleHealth(ctx, injectedAt + ms, onNode);
  await ctx.cluster.freezeNatsNode(node, ms);
  const healedAt = Date.now();
  const health = await sampling;
  ctx.log(`freeze-nats #${repetition}: ${node.name} frozen ${ms} ms; ${health}`);
  return {
    kind: 'freeze-nats',
    repetition,
    target: node.name,
    injectedAt,
    healedAt,
    windowEnd: healedAt + SETTLE_MS,
    affectedSessions,
    restartToHealthyMs: null,
    note: `frozen ${ms} ms; ${health}`,
  };
}

/** The instances whose NATS connection sits on `node`. */
async function instancesOn(node: NatsServer): Promise<Set<string>> {
  return new Set((await serviceConnections(node.monitorUrl))?.map((c) => c.instance) ?? []);
}

/**
 * /health of every instance every HEALTH_SAMPLE_MS until `until`: how many rounds found all of
 * them unhealthy at once, each instance's unhealthy rounds, and the rounds in which an instance
 * NOT connected to the frozen node was unhealthy (the goal: 0; only those on it may fail).
 */
async function sampleHealth(ctx: FaultContext, until: number, onFrozen: Set<string>): Promise<string> {
  const unhealthy = new Map(ctx.cluster.instances.map((i) => [i.name, 0]));
  let rounds = 0;
  let allDown = 0;
  while (Date.now() < until) {
    const t = Date.now();
    const answers = await Promise.all(
      ctx.cluster.instances.map(async (i) => {
        const res = await fetch(`${i.base}/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) }).catch(() => null);
        const ok = res?.status === 200;
        await res?.body?.cancel();
        if (!ok) unhealthy.set(i.name, unhealthy.get(i.name)! + 1);
        return ok;
      }),
    );
    rounds++;
    if (answers.every((ok) => !ok)) allDown++;
    await sleep(Math.max(0, HEALTH_SAMPLE_MS - (Date.now() - t)));
  }
  const each = [...unhealthy].map(([name, n]) => `${name} ${n}`).join(', ');
  const others = [...unhealthy].filter(([name]) => !onFrozen.has(name)).reduce((sum, [, n]) => sum + n, 0);
  const on = [...onFrozen].join(', ') || 'none';
  return `/health every ${HEALTH_SAMPLE_MS} ms (${HEALTH_TIMEOUT_MS} ms timeout): all unhealthy in ${allDown} of ${rounds} rounds; unhealthy rounds ${each}; connected to the frozen node: ${on}; unhealthy rounds of the others: ${others}`;
}

export function injectFault(ctx: FaultContext, kind: FaultKind, repetition: number): Promise<FaultRecord> {
  if (kind === 'freeze-instance') return freezeInstanceFault(ctx, repetition);
  if (kind === 'freeze-nats') return freezeNatsFault(ctx, repetition);
  if (kind === 'nats-kill') return natsFault(ctx, repetition);
  if (kind === 'pg-stop') return pgFault(ctx, repetition);
  return instanceFault(ctx, kind, repetition);
}
