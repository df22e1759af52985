import { EventEmitter } from 'node:events';
import type { Logger } from '../../log.js';
import type { Signal, Signals } from '../ports.js';

/**
 * Signals through an in-process EventEmitter. They reach subscribers of this bus instance
 * only: with several processes on one PostgreSQL a signal sent in one process is not seen in
 * another. That is within the port's contract (signals are at-most-once and receivers also
 * poll state, e.g. the cancel flag, between steps); distributed deployments use NATS.
 */
export function createLocalSignals({ log }: { log: Logger }): Signals {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async send(signal: Signal) {
      // Delivered on a later tick, as a network bus would: a sender never runs receiver code.
      setImmediate(() => {
        emitter.emit(signal.session_id, signal);
        emitter.emit(typeChannel(signal.type), signal);
      });
    },
    subscribe: (sessionId, onSignal) => listen(sessionId, onSignal),
    subscribeType: (type, onSignal) => listen(typeChannel(type), onSignal),
  };

  function listen(channel: string, onSignal: (signal: Signal) => void): () => void {
    const listener = (signal: Signal) => {
      try {
        onSignal(signal);
      } catch (err) {
        log.error({ err, sessionId: signal.session_id, signal: signal.type }, 'signal handler failed');
      }
    };
    emitter.on(channel, listener);
    return () => {
      emitter.off(channel, listener);
    };
  }
}

/** Session ids are UUIDs, so a channel named by type never meets one named by session. */
const typeChannel = (type: Signal['type']) => `type:${type}`;
