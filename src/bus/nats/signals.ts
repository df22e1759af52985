import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../log.js';
import type { Signal, Signals } from '../ports.js';
import { controlSubject } from './topology.js';

/**
 * Signals on core NATS subjects `ctl.<sid>.<type>`: at-most-once (a receiver that is
 * disconnected misses them), which the port allows because receivers also poll state.
 */
export function createNatsSignals({ nc, log }: { nc: NatsConnection; log: Logger }): Signals {
  return {
    async send(signal: Signal) {
      nc.publish(controlSubject(signal.session_id, signal.type), JSON.stringify(signal));
    },
    subscribe: (sessionId, onSignal) => listen(controlSubject(sessionId), sessionId, onSignal),
    // ctl.*.<type>: within the ctl.*.* every role may subscribe to (deploy/nats/auth.conf).
    subscribeType: (type, onSignal) => listen(`ctl.*.${type}`, undefined, onSignal),
  };

  function listen(subject: string, sessionId: string | undefined, onSignal: (signal: Signal) => void): () => void {
    const sub = nc.subscribe(subject, {
      callback(err, msg) {
        if (err) return log.warn({ err, sessionId, subject }, 'signal subscription ended');
        try {
          onSignal(msg.json<Signal>());
        } catch (handlerErr) {
          log.error({ err: handlerErr, sessionId, subject }, 'signal handler failed');
        }
      },
    });
    return () => sub.unsubscribe();
  }
}
