/**
 * The chaos suite's auditor (issue 13): pure over what a run collected — every session's stored
 * log, the ids each SSE follower received, every HTTP request, the fault records and what the
 * tool server saw — so the rules are testable on hand-made data (test/bench/chaos-audit.test.ts).
 */

import { KILL_RACE_MS, KILL_AFTER_MS } from './audit-types.js';
import type {
  LoggedEvent,
  SessionData,
  PostedTurn,
  RequestRecord,
  FaultRecord,
  ToolRun,
  ChaosData,
  FaultFindings,
  AuditReport,
} from './audit-types.js';
export * from './audit-types.js';

function inWindow(at: number, f: FaultRecord): boolean {
  return at >= f.injectedAt && at <= f.windowEnd;
}

/** Names the fault window a moment falls in, so each defect in the report says when it happened. */
function during(faults: FaultRecord[], at: number): string {
  const f = faults.find((x) => inWindow(at, x));
  return `${new Date(at).toISOString().slice(11, 23)}, ${f ? `during ${f.kind} #${f.repetition}` : 'no fault'}`;
}

const TERMINAL = new Set(['turn.completed', 'turn.failed', 'turn.cancelled']);
const MAX_EXAMPLES = 40;

function turnOf(e: LoggedEvent): string | undefined {
  return e.context.turn_id ?? (typeof e.data['turn_id'] === 'string' ? e.data['turn_id'] : undefined);
}

/** The workload's name for the POST attempt that sent an input.message (its `metadata.post`). */
function postOf(e: LoggedEvent): string | undefined {
  const post = e.data['message']?.metadata?.post;
  return typeof post === 'string' ? post : undefined;
}

/** The `id` query parameter of a tool call's URL: the workload names every call uniquely. */
export function callKeyOf(args: unknown): string | null {
  const url = typeof args === 'object' && args !== null ? (args as { url?: unknown }).url : undefined;
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).searchParams.get('id');
  } catch {
    return null;
  }
}

interface Collector {
  examples: string[];
  note(text: string): void;
}

function collector(): Collector {
  const examples: string[] = [];
  return { examples, note: (text) => void (examples.length < MAX_EXAMPLES && examples.push(text)) };
}

/** Duplicate ids and sequence gaps of one log (the log is read in sequence order). */
function logIntegrity(s: SessionData, c: Collector): { duplicateIds: number; gaps: number } {
  const seen = new Set<string>();
  let duplicateIds = 0;
  let gaps = 0;
  s.log.forEach((e, i) => {
    if (seen.has(e.id)) {
      duplicateIds++;
      c.note(`session ${s.id}: event id ${e.id} twice (sequence ${e.sequence})`);
    }
    seen.add(e.id);
    const expected = i === 0 ? 1 : s.log[i - 1]!.sequence + 1;
    if (e.sequence !== expected) {
      gaps++;
      c.note(`session ${s.id}: sequence ${expected} expected, ${e.sequence} found (event ${e.id})`);
    }
  });
  return { duplicateIds, gaps };
}

/** Events a turn that ended in turn.completed must hold, counted by what is missing. */
function missingInCompletedTurn(
  s: SessionData,
  turnId: string,
  events: LoggedEvent[],
  c: Collector,
  when: (at: number) => string,
): Record<string, number> {
  const missing: Record<string, number> = {};
  const miss = (what: string, detail: string) => {
    missing[what] = (missing[what] ?? 0) + 1;
    c.note(`session ${s.id} turn ${turnId}: ${what} missing (${detail}; turn started ${when(Date.parse(events[0]!.ts))})`);
  };
  const has = (type: string, pred: (e: LoggedEvent) => boolean = () => true) => events.some((e) => e.type === type && pred(e));
  if (!has('session.activated')) miss('session.activated', 'no activation');
  for (const e of events.filter((x) => x.type === 'reason.started')) {
    const it = e.data['iteration'];
    if (!has('reason.completed', (x) => x.data['iteration'] === it)) miss('reason.completed', `iteration ${it}`);
    if (!has('llm.generation', (x) => x.data['iteration'] === it)) miss('llm.generation', `iteration ${it}`);
  }
  for (const e of events.filter((x) => x.type === 'act.started')) {
    const it = e.data['iteration'];
    if (!has('act.completed', (x) => x.data['iteration'] === it)) miss('act.completed', `iteration ${it}`);
  }
  for (const e of events.filter((x) => x.type === 'tool.started')) {
    const callId = e.data['tool_call']?.id;
    if (!has('tool.completed', (x) => x.data['tool_call_id'] === callId)) miss('tool.completed', `call ${callId}`);
  }
  return missing;
}

interface TurnFindings {
  logged: number;
  completed: number;
  failed: number;
  cancelled: number;
  stuck: number;
  missing: Record<string, number>;
  messageIds: Set<string>;
}

/** Turns of one session by turn id: how each ended, and what completed ones lack. */
function auditTurns(s: SessionData, c: Collector, when: (at: number) => string): TurnFindings {
  const byTurn = new Map<string, LoggedEvent[]>();
  for (const e of s.log) {
    const t = turnOf(e);
    if (t) byTurn.set(t, [...(byTurn.get(t) ?? []), e]);
  }
  const out: TurnFindings = { logged: 0, completed: 0, failed: 0, cancelled: 0, stuck: 0, missing: {}, messageIds: new Set() };
  for (const [turnId, events] of byTurn) {
    const started = events.find((e) => e.type === 'turn.started');
    if (!started) continue;
    out.logged++;
    if (typeof started.data['input_message_id'] === 'string') out.messageIds.add(started.data['input_message_id']);
    const ends = events.filter((e) => TERMINAL.has(e.type));
    if (ends.length === 0) {
      out.stuck++;
      c.note(
        `session ${s.id} turn ${turnId}: stuck (last event ${events.at(-1)!.type} #${events.at(-1)!.sequence}, ${when(Date.parse(events.at(-1)!.ts))})`,
      );
      continue;
    }
    if (ends.length > 1) c.note(`session ${s.id} turn ${turnId}: ${ends.length} terminal events`);
    const end = ends[0]!;
    if (end.type === 'turn.failed') {
      out.failed++;
      c.note(`session ${s.id} turn ${turnId}: failed (${String(end.data['error_code'])}: ${String(end.data['error']).slice(0, 120)})`);
    } else if (end.type === 'turn.cancelled') out.cancelled++;
    else {
      out.completed++;
      for (const [k, n] of Object.entries(missingInCompletedTurn(s, turnId, events, c, when))) out.missing[k] = (out.missing[k] ?? 0) + n;
    }
  }
  return out;
}

/** What a follower received against the log: lost, repeated, out of order, unknown ids. */
function auditSse(s: SessionData, c: Collector) {
  const position = new Map(s.log.map((e, i) => [e.id, i]));
  const seen = new Set<string>();
  let repeated = 0;
  let outOfOrder = 0;
  let unknown = 0;
  let last = -1;
  for (const id of s.sseReceived) {
    const pos = position.get(id);
    if (pos === undefined) {
      unknown++;
      c.note(`session ${s.id}: SSE delivered ${id}, which is not in the log`);
      continue;
    }
    if (seen.has(id)) {
      repeated++;
      continue;
    }
    seen.add(id);
    if (pos < last) {
      outOfOrder++;
      c.note(`session ${s.id}: SSE delivered #${s.log[pos]!.sequence} after #${s.log[last]!.sequence}`);
    }
    last = Math.max(last, pos);
  }
  const lostEvents = s.log.filter((e) => !seen.has(e.id));
  if (lostEvents.length)
    c.note(`session ${s.id}: SSE never delivered ${lostEvents.length} events, first #${lostEvents[0]!.sequence} ${lostEvents[0]!.type}`);
  return { received: s.sseReceived.length, lost: lostEvents.length, repeated, outOfOrder, unknown };
}

/** Tool calls: run twice (tool server hits), answered 200 but logged as failed, two results for one call. */
function auditTools(sessions: SessionData[], tools: ToolRun[], faults: FaultRecord[], c: Collector) {
  const runs = new Map(tools.map((t) => [t.callKey, t]));
  const kills = faults.filter((f) => f.kind === 'kill-llm' || f.kind === 'kill-tool').map((f) => f.injectedAt);
  // An answer written up to KILL_AFTER_MS after the SIGKILL went to a dead process's socket (the
  // kernel takes the write; the 10.17 kill-llm run had one 0.3 s after, with the machine at load 15).
  const killedSoonAfter = (at: number | undefined) =>
    at !== undefined && kills.some((k) => k >= at - KILL_AFTER_MS && k <= at + KILL_RACE_MS);
  let calls = 0;
  let succeededRecordedFailed = 0;
  let answeredThenKilled = 0;
  let duplicateResults = 0;
  let neverRun = 0;
  for (const s of sessions) {
    const keyByCall = new Map<string, string>();
    for (const e of s.log.filter((x) => x.type === 'tool.started')) {
      const key = callKeyOf(e.data['tool_call']?.arguments);
      if (key) keyByCall.set(e.data['tool_call'].id, key);
    }
    const results = new Map<string, LoggedEvent[]>();
    for (const e of s.log.filter((x) => x.type === 'tool.completed')) {
      results.set(e.data['tool_call_id'], [...(results.get(e.data['tool_call_id']) ?? []), e]);
    }
    for (const [callId, key] of keyByCall) {
      calls++;
      const run = runs.get(key);
      const done = results.get(callId) ?? [];
      if (done.length > 1) {
        duplicateResults++;
        c.note(
          `session ${s.id}: tool call ${callId} has ${done.length} tool.completed events (${during(faults, Date.parse(done[0]!.ts))})`,
        );
      }
      if (!run) {
        neverRun++;
        continue;
      }
      if (run.answered && done.some((e) => e.data['success'] === false)) {
        if (killedSoonAfter(run.answeredAt)) {
          answeredThenKilled++;
          continue;
        }
        succeededRecordedFailed++;
        const failed = done.find((e) => e.data['success'] === false)!;
        c.note(
          `session ${s.id}: tool call ${callId} (${key}) answered 200 at ${during(faults, run.answeredAt ?? 0)} but recorded as failed: ${String(failed.data['error'])}`,
        );
      }
    }
  }
  const runTwice = tools.filter((t) => t.hits > 1);
  for (const t of runTwice) c.note(`tool call ${t.callKey} ran ${t.hits} times (last answer ${during(faults, t.answeredAt ?? 0)})`);
  return { calls, runTwice: runTwice.length, succeededRecordedFailed, answeredThenKilled, duplicateResults, neverRun };
}

/** A POST of a message answered 409: the workload sends one only after the previous turn idled. */
const isBusy = (r: RequestRecord) => r.kind === 'messages' && r.status === 409;

/** 5xx, unanswered and busy-refused requests inside and outside the fault windows. */
function auditHttp(requests: RequestRecord[], faults: FaultRecord[], c: Collector) {
  const out = {
    requests: requests.length,
    outside5xx: 0,
    inside5xx: 0,
    inside503: 0,
    inside500: 0,
    noAnswerOutside: 0,
    noAnswerInside: 0,
    busyOutside: 0,
    busyInside: 0,
  };
  for (const r of requests) {
    const inside = faults.some((f) => inWindow(r.at, f));
    if (isBusy(r)) {
      if (inside) out.busyInside++;
      else out.busyOutside++;
    }
    if (r.status === 0) {
      if (inside) out.noAnswerInside++;
      else {
        out.noAnswerOutside++;
        c.note(`no answer outside any fault window: ${r.kind} on ${r.instance} at ${new Date(r.at).toISOString()} ${r.error ?? ''}`);
      }
      continue;
    }
    if (r.status < 500) continue;
    if (!inside) {
      out.outside5xx++;
      c.note(`${r.status} outside any fault window: ${r.kind} on ${r.instance} at ${new Date(r.at).toISOString()} ${r.error ?? ''}`);
      continue;
    }
    out.inside5xx++;
    if (r.status === 503) out.inside503++;
    else out.inside500++;
  }
  return out;
}

const maxOrNull = (xs: number[]): number | null => (xs.length ? Math.max(...xs) : null);

/** Recovery per fault: fault → each affected session's first event appended after it. */
function auditFault(f: FaultRecord, sessions: Map<string, SessionData>, requests: RequestRecord[], posted: PostedTurn[]): FaultFindings {
  const delays: number[] = [];
  let unrecovered = 0;
  for (const id of f.affectedSessions) {
    const next = sessions.get(id)?.log.find((e) => Date.parse(e.ts) > f.injectedAt);
    if (next) delays.push(Date.parse(next.ts) - f.injectedAt);
    else unrecovered++;
  }
  const window = requests.filter((r) => inWindow(r.at, f));
  const fivexx = window.filter((r) => r.status >= 500);
  return {
    kind: f.kind,
    repetition: f.repetition,
    target: f.target,
    affected: f.affectedSessions.length,
    recoveryFirstMs: delays.length ? Math.min(...delays) : null,
    recoveryAllMs: delays.length ? Math.max(...delays) : null,
    unrecovered,
    restartToHealthyMs: f.restartToHealthyMs,
    status5xx: fivexx.length,
    status503: fivexx.filter((r) => r.status === 503).length,
    status500: fivexx.filter((r) => r.status !== 503).length,
    busy409: window.filter(isBusy).length,
    noAnswer: window.filter((r) => r.status === 0).length,
    retryWaitMaxMs: maxOrNull(
      posted.filter((p) => p.retriedFrom !== undefined && inWindow(p.retriedFrom, f)).map((p) => p.at - p.retriedFrom!),
    ),
    ...(f.note ? { note: f.note } : {}),
  };
}

export function audit(data: ChaosData): AuditReport {
  const c = collector();
  const report: AuditReport = {
    turns: {
      posted: data.posted.length,
      logged: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      stuck: 0,
      lost: 0,
      unconfirmed: 0,
      refusedThenRan: 0,
    },
    events: 0,
    duplicateIds: 0,
    sequenceGaps: 0,
    tools: { calls: 0, runTwice: 0, succeededRecordedFailed: 0, answeredThenKilled: 0, duplicateResults: 0, neverRun: 0 },
    missingStepEvents: { total: 0, byKind: {} },
    sse: { followers: 0, received: 0, lost: 0, repeated: 0, outOfOrder: 0, unknown: 0 },
    http: auditHttp(data.requests, data.faults, c),
    faults: [],
    examples: c.examples,
  };
  const loggedMessages = new Set<string>();
  for (const s of data.sessions) {
    report.events += s.log.length;
    const integrity = logIntegrity(s, c);
    report.duplicateIds += integrity.duplicateIds;
    report.sequenceGaps += integrity.gaps;
    const t = auditTurns(s, c, (at) => during(data.faults, at));
    for (const k of ['logged', 'completed', 'failed', 'cancelled', 'stuck'] as const) report.turns[k] += t[k];
    for (const [k, n] of Object.entries(t.missing)) {
      report.missingStepEvents.byKind[k] = (report.missingStepEvents.byKind[k] ?? 0) + n;
      report.missingStepEvents.total += n;
    }
    for (const m of t.messageIds) loggedMessages.add(m);
    const sse = auditSse(s, c);
    report.sse.followers++;
    for (const k of ['received', 'lost', 'repeated', 'outOfOrder', 'unknown'] as const) report.sse[k] += sse[k];
  }
  const postedMessages = new Set(data.posted.map((p) => p.messageId));
  for (const p of data.posted) {
    if (loggedMessages.has(p.messageId)) continue;
    report.turns.lost++;
    c.note(`session ${p.sessionId}: message ${p.messageId} accepted (201) but no turn.started names it`);
  }
  const refused = new Set((data.refused ?? []).map((r) => `${r.sessionId} ${r.post}`));
  for (const s of data.sessions) {
    for (const e of s.log.filter((x) => x.type === 'input.message' && !postedMessages.has(x.data['message']?.id))) {
      const post = postOf(e);
      if (post === undefined || !refused.has(`${s.id} ${post}`)) continue;
      report.turns.refusedThenRan++;
      c.note(
        `session ${s.id}: message ${e.data['message'].id} (post ${post}) was answered 5xx and stored anyway (${during(data.faults, Date.parse(e.ts))})`,
      );
    }
    for (const e of s.log.filter((x) => x.type === 'turn.started' && !postedMessages.has(x.data['input_message_id']))) {
      report.turns.unconfirmed++;
      c.note(
        `session ${s.id}: turn ${e.data['turn_id']} (message ${e.data['input_message_id']}) ran, but no POST got a 201 for it (${during(data.faults, Date.parse(e.ts))})`,
      );
    }
  }
  report.tools = auditTools(data.sessions, data.tools, data.faults, c);
  const byId = new Map(data.sessions.map((s) => [s.id, s]));
  report.faults = data.faults.map((f) => auditFault(f, byId, data.requests, data.posted));
  return report;
}
