/**
 * What the turn's API half shares (spec 3.2, 4.2): its ports, the request's span and the
 * session-access check. The queue's one-turn-per-session rule is the race-free busy guard; the
 * session row is the fast check in front of it.
 */
import type { SessionEvent } from '../../../schemas/events.js';
import type { ModelResolver } from '../../llm/index.js';
import type { ImageSource, MessageQueue, QueueDispatcher, SessionStatusStore, SessionTurnRow } from '../../turns/index.js';
import { assertSessionAccess, type Actor } from '../../auth/index.js';
import type { Bus } from '../../bus/index.js';
import type { Store } from '../../db/index.js';
import type { Logger } from '../../log.js';
import { createIdTracing, type TraceSpan, type Tracing } from '../../observability/index.js';
import type { OrgTurnCap } from './org-turn-cap.js';
import type { ReplySchemaChecks } from '../../offthread/index.js';

export interface TurnServiceDeps {
  store: Store;
  bus: Bus<SessionEvent>;
  log: Logger;
  models: ModelResolver;
  images: ImageSource;
  status: SessionStatusStore;
  /** The request's span stamps the events appended here and travels in the turn job (default: ids only). */
  tracing?: Tracing;
  /** The organisation's cap on turns in flight (default: none). */
  turnCap?: OrgTurnCap;
  /** Messages sent while a turn runs (decision 0097); without them `on_busy` other than `reject` answers as `reject`. */
  queue?: MessageQueue;
  dispatcher?: QueueDispatcher;
  /** Queued messages per session and per organisation (SESSION_MAX_QUEUED_MESSAGES, ORG_MAX_QUEUED_MESSAGES). */
  queueLimits?: { perSession: number; perOrg: number };
  /** Compiles `controls.response_format` schemas off the event loop (docs/decisions/0098-structured-replies.md). */
  replySchemas?: ReplySchemaChecks;
  /** STRUCTURED_OUTPUT_MAX_SCHEMA_BYTES (default 64 KiB). */
  maxResponseSchemaBytes?: number;
}

/** Who submits: a user (HTTP) or a component acting for an organisation (the scheduler). */
export type TurnPrincipal = Actor;

export interface TurnApiContext extends TurnServiceDeps {
  /**
   * The span of the request (HTTP, or the scheduler's). Without one (export off and no incoming
   * traceparent, or a caller outside both) a root span of its own: its ids are all it is used for.
   */
  span(): TraceSpan;
  /** The session's turn row, once the principal may reach it (404 otherwise). */
  owned(principal: TurnPrincipal, sessionId: string): Promise<SessionTurnRow>;
  /** `owned` for a request that starts a turn, with the organisation's turns in flight for its cap (0 when no cap is set). */
  ownedToStart(principal: TurnPrincipal, sessionId: string): Promise<SessionTurnRow & { busyInOrg: number }>;
}

export const BUSY_STATUSES: ReadonlySet<string> = new Set(['active', 'waiting_for_tool_results']);

export function createTurnApiContext(deps: TurnServiceDeps): TurnApiContext {
  const tracing = deps.tracing ?? createIdTracing();
  async function owned(principal: TurnPrincipal, sessionId: string): Promise<SessionTurnRow> {
    const row = await deps.status.read(sessionId);
    assertSessionAccess(principal, row);
    return row!;
  }
  return {
    ...deps,
    tracing,
    span: () => tracing.active() ?? tracing.startSpan('turn.submit'),
    owned,
    async ownedToStart(principal, sessionId) {
      // Without a cap nothing is counted.
      if (!deps.turnCap) return { ...(await owned(principal, sessionId)), busyInOrg: 0 };
      const row = await deps.status.readWithBusyInOrg(sessionId);
      assertSessionAccess(principal, row);
      return row!;
    },
  };
}
