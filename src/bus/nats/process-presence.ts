import { randomUUID } from 'node:crypto';
import { Empty, type NatsConnection, NoRespondersError, RequestError } from '@nats-io/transport-node';
import type { Presence } from '../ports.js';
import { OPS_SUBJECT_PREFIX } from './ops-service.js';

/** How long a check waits for another process to answer, in ms. */
export const DEFAULT_ALIVE_TIMEOUT_MS = 500;

/** `agent_sessions.ops.<id>.alive`: under the ops prefix, which every role subscribes to (deploy/nats/auth.conf). */
const aliveSubject = (id: string) => `${OPS_SUBJECT_PREFIX}.${id}.alive`;

/**
 * This process, answering on a subject of its own while it lives, and a check whether another
 * process does. A SIGKILLed process's subscription goes with its connection, so asking it gets
 * "no responders" at once; a live one answers even while a JetStream stream elects a leader
 * (core NATS needs no leader). One that neither answers nor is gone (frozen, or on a stalled
 * NATS node: its subscription stays until the server gives up on the connection) is `silent`,
 * not dead: it may wake holding a tool's result. Claim takeovers use it (turn-queue.ts).
 */
export function createProcessPresence(nc: NatsConnection, timeoutMs = DEFAULT_ALIVE_TIMEOUT_MS) {
  const id = randomUUID();
  nc.subscribe(aliveSubject(id), { callback: (_err, m) => void m.respond() });
  return {
    id,
    async check(other: string): Promise<Presence> {
      if (other === id) return 'alive';
      try {
        await nc.request(aliveSubject(other), Empty, { timeout: timeoutMs });
        return 'alive';
      } catch (err) {
        const gone = err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders());
        return gone ? 'gone' : 'silent';
      }
    },
  };
}

export type ProcessPresence = ReturnType<typeof createProcessPresence>;
