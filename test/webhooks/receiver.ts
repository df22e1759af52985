/**
 * A real webhook receiver for the tests: an HTTP server on loopback that records every POST,
 * checks its Standard Webhooks signature with the official `standardwebhooks` package, and
 * answers as the test says (a status, after a delay, or only when released).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, any> };
  /** Which of the receiver's secrets verified the signature (indexes into `secrets`); empty: none did. */
  verifiedBy: number[];
  at: number;
}

export type Answer = { status: number; delayMs?: number; hold?: Promise<void> };

export interface Receiver {
  url: string;
  received: Received[];
  /** Secrets to verify with (set once the endpoint is created). */
  secrets: string[];
  /** Decides the answer to each request (default 200). */
  answer: (r: Received, n: number) => Answer;
  waitFor(pred: (all: Received[]) => boolean, timeoutMs?: number, what?: string): Promise<Received[]>;
  close(): Promise<void>;
}

function verifiedBy(secrets: readonly string[], body: string, headers: IncomingHttpHeaders): number[] {
  const h = {
    'webhook-id': String(headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(headers['webhook-signature'] ?? ''),
  };
  const out: number[] = [];
  secrets.forEach((s, i) => {
    try {
      new Webhook(s).verify(body, h);
      out.push(i);
    } catch {
      // not signed with this one
    }
  });
  return out;
}

export async function startReceiver(t: { after(fn: () => unknown): void }): Promise<Receiver> {
  const rx: Receiver = {
    url: '',
    received: [],
    secrets: [],
    answer: () => ({ status: 200 }),
    async waitFor(pred, timeoutMs = 30_000, what = 'deliveries') {
      const deadline = Date.now() + timeoutMs;
      while (!pred(rx.received)) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; received: ${rx.received.map((r) => `${r.json.type}/${r.id}`).join(', ')}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return rx.received;
    },
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const r: Received = {
        id: String(req.headers['webhook-id'] ?? ''),
        headers: req.headers,
        body,
        json: JSON.parse(body),
        verifiedBy: verifiedBy(rx.secrets, body, req.headers),
        at: Date.now(),
      };
      rx.received.push(r);
      const a = rx.answer(r, rx.received.length);
      const reply = () => {
        if (!res.destroyed) res.writeHead(a.status, { 'content-type': 'text/plain' }).end('ok');
      };
      if (a.hold) void a.hold.then(reply);
      else if (a.delayMs) setTimeout(reply, a.delayMs);
      else reply();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  rx.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  t.after(() => rx.close());
  return rx;
}

/** The environment a test service needs to deliver to the receiver quickly. */
export const FAST_WEBHOOKS = {
  WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
  WEBHOOK_POLL_MS: 100,
  WEBHOOK_RETRY_BASE_MS: 100,
  WEBHOOK_RETRY_MAX_DELAY_MS: 300,
  WEBHOOK_TIMEOUT_MS: 1000,
  WEBHOOK_ENDPOINT_CACHE_MS: 0,
};
