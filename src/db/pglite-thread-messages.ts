/** What the embedded database's thread is started with and the messages across its boundary. */
export interface PgliteThreadData {
  /** PGlite's data directory. */
  dataDir: string;
  /** Unix socket the wire-protocol server listens on (`<dir>/.s.PGSQL.<port>`, the libpq layout). */
  socketPath: string;
  /** Connections the server accepts; the service's pool must not open more. */
  maxConnections: number;
  /** Only create the database files (initdb) and close; no server. */
  initOnly?: boolean;
}

export type PgliteThreadRequest = { type: 'close' };

export type PgliteThreadReply = { type: 'ready' } | { type: 'failed'; error: string } | { type: 'closed'; error?: string };
