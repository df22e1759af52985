import { randomUUID } from 'node:crypto';
import { Empty, type NatsConnection } from '@nats-io/transport-node';
import { OPS_SUBJECT_PREFIX } from './ops-service.js';

/** How long a check waits for another process to answer, in ms. */
export const DEFAULT_ALIVE_TIMEOUT_MS = 500;

/** `agent_sessions.ops.<id>.alive`: under the ops prefix, which every role subscribes to (deploy/nats/auth.conf). */
const aliveSubject = (id: string) => `${OPS_SUBJECT_PREFIX}.${id}.alive`;

/**
 * This process, answering on a subject of its own while it lives, and a check whether another
 * process does. A SIGKILLed process's subscription goes with its connection, so asking it gets
 * "no responders" at once; a live one answers even while a JetStream stream elects a leader
 * (core NATS needs no leader). Claim takeovers use it (turn-queue.ts `tookOverFromLive`).
 */
export function createProcessPresence(nc: NatsConnection, timeoutMs = DEFAULT_ALIVE_TIMEOUT_MS) {
  const id = randomUUID();
  nc.subscribe(aliveSubject(id), { callback: (_err, m) => void m.respond() });
  return {
    id,
    async isAlive(other: string): Promise<boolean> {
      if (other === id) return true;
      try {
        await nc.request(aliveSubject(other), Empty, { timeout: timeoutMs });
        return true;
      } catch {
        return false; // no responders (gone) or no answer in time: treated as gone
      }
    },
  };
}

export type ProcessPresence = ReturnType<typeof createProcessPresence>;
