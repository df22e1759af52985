import type { NatsConnection } from '@nats-io/transport-node';
import type { Socket } from 'node:net';

/** The parts of nats.js's Node transport this module relies on (not public API). */
interface TransportShape {
  socket?: Socket;
  isClosed?: boolean;
  _send(frame: Uint8Array): Promise<void>;
}

const PATCHED = Symbol.for('agent-session-service.nats.coalesced-writes');

/**
 * Coalesces the connection's socket writes to one per event-loop turn. nats.js flushes its
 * outbound buffer on a microtask after every request or publish that finds it empty, so a busy
 * service makes one `write` syscall per message (the largest single item of the turn
 * benchmark's profile). Corking the socket on the first write and uncorking it in
 * `setImmediate` sends everything queued during the turn in one `writev`, after the current
 * I/O callbacks and their microtasks: no extra latency beyond the rest of the turn.
 *
 * Patches the transport class (so reconnects keep it) once per process; returns false, and
 * changes nothing, when nats.js no longer has the expected shape.
 */
export function coalesceSocketWrites(nc: NatsConnection): boolean {
  const transport = (nc as unknown as { protocol?: { transport?: TransportShape } }).protocol?.transport;
  const proto = transport ? (Object.getPrototypeOf(transport) as TransportShape & { [PATCHED]?: true }) : undefined;
  if (!proto || typeof proto._send !== 'function' || !transport?.socket) return false;
  if (proto[PATCHED]) return true;
  const send = proto._send;
  proto._send = function coalescedSend(this: TransportShape, frame: Uint8Array): Promise<void> {
    const socket = this.socket;
    if (socket && !this.isClosed && socket.writableCorked === 0) {
      socket.cork();
      setImmediate(() => socket.uncork());
    }
    return send.call(this, frame);
  };
  proto[PATCHED] = true;
  return true;
}
