import { createServer } from 'node:net';

/** The HTTP port, bound by this process until the server takes it over. */
export interface PortHold {
  /** Frees the port for the HTTP server's own listen; idempotent. */
  release(): Promise<void>;
}

/**
 * Binds HOST:PORT at the very start and keeps it until the HTTP server listens, so a port in use
 * stops the start before it does anything that cannot be undone: creating the first admin and
 * printing its key once (issue 30 item 16; that key was lost when the listen failed after it).
 * Exclusive, as the server's own listen (src/http/uws-server.ts), with the same message.
 */
export function holdPort(host: string, port: number): Promise<PortHold> {
  // A connection meanwhile (a health probe) is reset at once: kept open it would answer nothing
  // and hold up the close that hands the port over.
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', () => reject(new Error(`cannot listen on ${host}:${port}: address in use or not available`)));
    server.listen({ host, port, exclusive: true }, () => {
      let released: Promise<void> | undefined;
      resolve({
        release: () => (released ??= new Promise<void>((done) => server.close(() => done()))),
      });
    });
  });
}
