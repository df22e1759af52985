/**
 * What the chaos suite collects and what its auditor (audit.ts) reports: the records of a run
 * (stored logs, SSE receipts, HTTP requests, faults, tool runs) and the findings.
 */

/** One stored event as GET /v1/sessions/{id}/events returns it (the fields the audit reads). */
export interface LoggedEvent {
  id: string;
  type: string;
  ts: string;
  sequence: number;
  context: { turn_id?: string; exec_id?: string };
  data: Record<string, any>;
}

export interface SessionData {
  id: string;
  log: LoggedEvent[];
  /** Event ids in the order the session's SSE follower received them, across reconnects. */
  sseReceived: string[];
}

/** A POST …/messages the service answered 201 to. */
export interface PostedTurn {
  sessionId: string;
  messageId: string;
  at: number;
  /** When an earlier attempt with the same Idempotency-Key got no answer or a 5xx (the retries then waited until `at`). */
  retriedFrom?: number;
}

/** A POST …/messages answered 5xx: its `metadata.post` names the attempt, so a turn it started anyway is found. */
export interface RefusedPost {
  sessionId: string;
  post: string;
  at: number;
}

/** One HTTP request of the workload; status 0 = no answer (connection refused, reset, timeout). */
export interface RequestRecord {
  at: number;
  instance: string;
  kind: string;
  status: number;
  error?: string;
}

export const FAULT_KINDS = ['kill-llm', 'kill-tool', 'term', 'nats-kill', 'pg-stop', 'freeze-instance', 'freeze-nats'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRecord {
  kind: FaultKind;
  repetition: number;
  /** The instance, NATS node or database the fault hit. */
  target: string;
  injectedAt: number;
  /** When the fault was undone: the instance or node serving again, the database started. */
  healedAt: number;
  /** Requests between injectedAt and windowEnd count as inside the fault window. */
  windowEnd: number;
  /** Sessions whose turn was running where the fault hit (all running ones for NATS and PostgreSQL faults). */
  affectedSessions: string[];
  /** Restart of the instance or node until it answered healthy, in ms. */
  restartToHealthyMs: number | null;
  note?: string;
}

/** What the tool server saw for one tool call (keyed by the call's own id in its URL). */
export interface ToolRun {
  callKey: string;
  hits: number;
  /** The server finished sending a 200 response at least once: the tool succeeded on its side. */
  answered: boolean;
  answeredAt?: number;
}

/**
 * A worker SIGKILLed this soon after a tool's answer reached its socket may die before it reads
 * or records it: "interrupted" is then the truth as far as the service can know, not a defect.
 */
export const KILL_RACE_MS = 2000;
/** How long after a SIGKILL the tool server may still see its answer written (to the dead socket). */
export const KILL_AFTER_MS = 1000;

export interface ChaosData {
  sessions: SessionData[];
  posted: PostedTurn[];
  /** POSTs answered 5xx (issue 32: such an answer must have had no effect, or the one its retry returns). */
  refused?: RefusedPost[];
  requests: RequestRecord[];
  faults: FaultRecord[];
  tools: ToolRun[];
}

export interface FaultFindings {
  kind: FaultKind;
  repetition: number;
  target: string;
  affected: number;
  /** Fault → first event of an affected session appended after it; null: no session was affected. */
  recoveryFirstMs: number | null;
  /** Fault → the last affected session's first event after it (every affected turn moved on). */
  recoveryAllMs: number | null;
  /** Affected sessions with no event after the fault at all. */
  unrecovered: number;
  restartToHealthyMs: number | null;
  status5xx: number;
  status503: number;
  /** POST messages answered 409 busy: each is sent after the previous turn's session.idled (issue 32 item 4). */
  busy409: number;
  /** 5xx other than 503 inside this window (the goal: zero). */
  status500: number;
  noAnswer: number;
  /** POSTs whose first failure (no answer or 5xx) fell in this window: the longest wait from it to the 201 of a retry with the same key. */
  retryWaitMaxMs: number | null;
  note?: string;
}

export interface AuditReport {
  turns: {
    posted: number;
    logged: number;
    completed: number;
    failed: number;
    cancelled: number;
    stuck: number;
    /** Answered 201, never logged. */
    lost: number;
    /** Logged and run, but the client never got a 201 for it (a 5xx or no answer): a retry without a key would run it twice. */
    unconfirmed: number;
    /** Of those, turns started by a POST that was answered 5xx (issue 32 item 1: the goal is zero). */
    refusedThenRan: number;
  };
  events: number;
  duplicateIds: number;
  sequenceGaps: number;
  tools: {
    calls: number;
    runTwice: number;
    succeededRecordedFailed: number;
    /** Answered 200 and recorded as failed because a SIGKILL hit within KILL_RACE_MS of the answer (not counted above). */
    answeredThenKilled: number;
    duplicateResults: number;
    neverRun: number;
  };
  missingStepEvents: { total: number; byKind: Record<string, number> };
  sse: { followers: number; received: number; lost: number; repeated: number; outOfOrder: number; unknown: number };
  http: {
    requests: number;
    outside5xx: number;
    inside5xx: number;
    inside503: number;
    inside500: number;
    noAnswerOutside: number;
    noAnswerInside: number;
    /** POST messages answered 409 busy, outside and inside the fault windows. */
    busyOutside: number;
    busyInside: number;
  };
  faults: FaultFindings[];
  /** The first defects found, precisely (session ids, event ids), for the report. */
  examples: string[];
}
