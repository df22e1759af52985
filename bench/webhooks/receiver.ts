/** The benchmark's webhook receiver: counts deliveries (distinct `webhook-id`s) and verifies every `--verify-every`-th signature. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface BenchReceiver {
  url: string;
  ids: Set<string>;
  requests: number;
  verified: number;
  badSignatures: number;
  secrets: Map<string, string>;
  close(): Promise<void>;
}

export async function startBenchReceiver(verifyEvery: number): Promise<BenchReceiver> {
  const rx: BenchReceiver = {
    url: '',
    ids: new Set(),
    requests: 0,
    verified: 0,
    badSignatures: 0,
    secrets: new Map(),
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      rx.requests++;
      const id = String(req.headers['webhook-id']);
      rx.ids.add(id);
      const secret = rx.secrets.get(req.url ?? '');
      if (secret && rx.requests % verifyEvery === 0) {
        try {
          new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), {
            'webhook-id': id,
            'webhook-timestamp': String(req.headers['webhook-timestamp']),
            'webhook-signature': String(req.headers['webhook-signature']),
          });
          rx.verified++;
        } catch {
          rx.badSignatures++;
        }
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rx.close = () => new Promise<void>((r) => server.close(() => r()));
  return rx;
}
