import { App, us_listen_socket_close, type us_listen_socket } from 'uWebSockets.js';

/**
 * The transport's limit: a uWebSockets.js hello world with nothing else in the process.
 *
 *   node --import tsx bench/http/bare-server.ts [sync|async]   (env PORT, HOST)
 *
 * `sync` answers inside the request handler (what uWS is benchmarked with). `async` does what a
 * real handler must: attach onAborted, continue after an await, and cork the reply — the cost of
 * leaving the synchronous handler, without any application code.
 */
const variant = process.argv[2] ?? 'sync';
const port = Number(process.env['PORT'] ?? 9001);
const host = process.env['HOST'] ?? '127.0.0.1';
const BODY = '{"status":"ok"}';

const app = App();
if (variant === 'async') {
  app.get('/*', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    void Promise.resolve().then(() => {
      if (aborted) return;
      res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(BODY));
    });
  });
} else {
  app.get('/*', (res) => {
    res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').end(BODY);
  });
}

let listenSocket: us_listen_socket | null = null;
app.listen(host, port, (socket) => {
  if (!socket) {
    process.stderr.write(`bare-server: cannot listen on ${host}:${port}\n`);
    process.exit(1);
  }
  listenSocket = socket;
  process.stdout.write(`bare-server (${variant}) listening on ${host}:${port}\n`);
});

const stop = () => {
  if (listenSocket) us_listen_socket_close(listenSocket);
  app.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
