/** bench/real-path's results: one point per target, K and round, its table, and the ratios the issues ask for. */
import type { RealPathClientReport } from './client.js';

export type Target = 'nats' | 'embedded' | 'langgraph' | 'mastra' | 'mastra-stateless';

export interface PointResult extends Omit<RealPathClientReport, 'target'> {
  target: Target;
  /** `nats`, `nats-base` (--baseline), `langgraph@10` (a peer at a setting), … */
  label: string;
  /** A peer: whether it keeps the conversation (the anchor) or stores nothing (the floor); absent for ours. */
  peer?: 'conversation' | 'stateless';
  round: number;
  soak: boolean;
  /** Service (or peer process tree) CPU ms per turn, from /proc over the measured window. */
  cpuMsPerTurn: number | null;
  cores: number | null;
  postgresMsPerTurn: number | null;
  natsMsPerTurn: number | null;
  fakeLlmMsPerTurn: number | null;
  clientCores: number | null;
  /** RSS (KiB) of the service (the peer: its whole process tree) at the start and end of the window, and its peak. */
  rssKiB: { start: number | null; end: number | null; max: number | null; samples: [number, number][] };
  machineBusy: number | null;
  backgroundBusy: number | null;
}

export const round2 = (n: number) => Math.round(n * 100) / 100;
const mb = (kib: number | null) => (kib === null ? '-' : String(Math.round(kib / 1024)));
const allMs = (r: PointResult) =>
  r.cpuMsPerTurn === null ? null : round2(r.cpuMsPerTurn + (r.postgresMsPerTurn ?? 0) + (r.natsMsPerTurn ?? 0));

export function table(results: PointResult[]): string {
  const head =
    'target              K  turns/s  turn p50  turn p99  conv p50  svc ms/turn¹  pg ms  nats ms  all ms²  cores  RSS MB start→end (max)  errors  machine';
  const rows = results.map((r) =>
    [
      (r.soak ? `${r.label}*` : r.label).padEnd(18),
      String(r.sessions).padStart(3),
      String(r.turnsPerSec).padStart(8),
      String(r.turnMs.p50).padStart(9),
      String(r.turnMs.p99).padStart(9),
      String(r.conversationMs.p50).padStart(9),
      String(r.cpuMsPerTurn ?? '-').padStart(13),
      String(r.postgresMsPerTurn ?? '-').padStart(6),
      String(r.natsMsPerTurn ?? '-').padStart(8),
      String(allMs(r) ?? '-').padStart(8),
      String(r.cores ?? '-').padStart(6),
      `${mb(r.rssKiB.start)}→${mb(r.rssKiB.end)} (${mb(r.rssKiB.max)})`.padStart(24),
      String(r.errors).padStart(7),
      (r.machineBusy === null ? '-' : `${Math.round(r.machineBusy * 100)} %`).padStart(8),
    ].join(' '),
  );
  return [head, ...rows].join('\n');
}

/**
 * The anchor at one point (K, round, soak) of the targets: among the peers that keep the
 * conversation, at every setting, the best turns/s and the lowest CPU per turn (each may come from
 * another peer or setting); and the stateless floor's CPU per turn.
 */
export function anchorAt(results: PointResult[], at: PointResult) {
  const same = results.filter((p) => p.sessions === at.sessions && p.round === at.round && p.soak === at.soak);
  const keeping = same.filter((p) => p.peer === 'conversation' && p.turns > 0);
  const best = <T>(xs: T[], key: (x: T) => number | null, pick: (a: number, b: number) => boolean) =>
    xs.reduce<T | null>((acc, x) => (key(x) !== null && (acc === null || pick(key(x)!, key(acc)!)) ? x : acc), null);
  return {
    fastest: best(
      keeping,
      (p) => p.turnsPerSec,
      (a, b) => a > b,
    ),
    cheapest: best(
      keeping,
      (p) => p.cpuMsPerTurn,
      (a, b) => a < b,
    ),
    floor: best(
      same.filter((p) => p.peer === 'stateless' && p.turns > 0),
      (p) => p.cpuMsPerTurn,
      (a, b) => a < b,
    ),
  };
}

/** Ours against the anchors at the same K and round (issue 34's targets), and against --baseline. */
export function ratios(results: PointResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    if (r.peer) continue;
    const { fastest, cheapest, floor } = anchorAt(results, r);
    const point = `${r.label} K=${r.sessions}${r.soak ? ' soak' : ''} round ${r.round}`;
    if (fastest && cheapest?.cpuMsPerTurn) {
      out.push(
        `${point}: turns/s ×${round2(r.turnsPerSec / fastest.turnsPerSec)} of ${fastest.label} (target ≥ 3), ` +
          `service CPU/turn ×${round2((r.cpuMsPerTurn ?? NaN) / cheapest.cpuMsPerTurn)} of ${cheapest.label} (≤ 0.25), ` +
          `all our processes ×${round2((allMs(r) ?? NaN) / cheapest.cpuMsPerTurn)} (≤ 0.35), ` +
          `turn p50 ×${round2(r.turnMs.p50 / fastest.turnMs.p50)}`,
      );
    }
    if (floor?.cpuMsPerTurn) {
      out.push(
        `${point}: service CPU/turn ×${round2((r.cpuMsPerTurn ?? NaN) / floor.cpuMsPerTurn)} of the stateless ${floor.label} (≤ 0.5)`,
      );
    }
  }
  // --baseline: this checkout against the other one, per mode, K and round.
  for (const b of results.filter((r) => r.label.endsWith('-base'))) {
    const r = results.find((x) => x.label === b.target && x.sessions === b.sessions && x.round === b.round && x.soak === b.soak);
    if (!r || !b.turnsPerSec || !b.cpuMsPerTurn) continue;
    out.push(
      `${b.target} K=${b.sessions} round ${b.round}, this checkout / baseline: turns/s ×${round2(r.turnsPerSec / b.turnsPerSec)}, ` +
        `service CPU/turn ${b.cpuMsPerTurn} → ${r.cpuMsPerTurn} ms (×${round2((r.cpuMsPerTurn ?? NaN) / b.cpuMsPerTurn)})`,
    );
  }
  return out;
}
