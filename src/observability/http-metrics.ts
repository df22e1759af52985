/**
 * HTTP and SSE metrics: requests by route template, method and status, handling time by route,
 * and SSE streams (open, opened, frames and bytes written, cycles, slow-client drops).
 */
import { Gauge, type Registry } from 'prom-client';
import type { HttpObserver, Route, SseObserver } from '../http/index.js';
import { CounterFamily, HistogramFamily, LATENCY_BUCKETS_S, type CounterCell, type HistogramCell } from './cells.js';
import { METRIC_PREFIX } from './names.js';

/** The label of requests no route matched (404, 405): the path itself would be unbounded. */
const UNMATCHED = 'unmatched';
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface RouteCells {
  duration: HistogramCell;
  /** Counter cells by status, filled on first use of each status. */
  byStatus: Map<number, CounterCell>;
  labels: { method: string; route: string };
}

export function createHttpMetrics(registry: Registry): HttpObserver {
  const requests = new CounterFamily(registry, {
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'HTTP requests handled, by method, route template and status.',
    labelNames: ['method', 'route', 'status'],
  });
  const duration = new HistogramFamily(registry, {
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time from routing to the reply (SSE: until the stream opens), by method and route template.',
    labelNames: ['method', 'route'],
    buckets: LATENCY_BUCKETS_S,
  });
  const byRoute = new WeakMap<Route, RouteCells>();
  const unmatched = new Map<string, RouteCells>();

  function cellsOf(method: string, route: string): RouteCells {
    const labels = { method, route };
    return { labels, duration: duration.cell(labels), byStatus: new Map() };
  }

  return {
    request(route, method, status, seconds) {
      let cells: RouteCells | undefined;
      if (route) {
        cells = byRoute.get(route);
        if (!cells) byRoute.set(route, (cells = cellsOf(route.method, route.path)));
      } else {
        const m = KNOWN_METHODS.has(method) ? method : 'OTHER';
        cells = unmatched.get(m);
        if (!cells) unmatched.set(m, (cells = cellsOf(m, UNMATCHED)));
      }
      let counter = cells.byStatus.get(status);
      if (!counter) cells.byStatus.set(status, (counter = requests.cell({ ...cells.labels, status: String(status) })));
      counter.value++;
      cells.duration.observe(seconds);
    },
  };
}

/** `openStreams`: the server's count of open SSE streams, read at scrape time. */
export function createSseMetrics(registry: Registry, openStreams: () => number): SseObserver {
  new Gauge({
    name: `${METRIC_PREFIX}sse_connections`,
    help: 'SSE streams open on this instance.',
    registers: [registry],
    collect() {
      this.set(openStreams());
    },
  });
  const opened = new CounterFamily(registry, { name: `${METRIC_PREFIX}sse_connections_opened_total`, help: 'SSE streams opened.' }).cell();
  const frames = new CounterFamily(registry, {
    name: `${METRIC_PREFIX}sse_frames_written_total`,
    help: 'SSE writes to sockets: event frames, heartbeats and disconnecting frames.',
  }).cell();
  const bytes = new CounterFamily(registry, {
    name: `${METRIC_PREFIX}sse_written_bytes_total`,
    help: 'UTF-8 bytes of SSE writes to sockets.',
  }).cell();
  const cycles = new CounterFamily(registry, {
    name: `${METRIC_PREFIX}sse_cycles_total`,
    help: 'SSE streams ended for their connection cycle (the client reconnects with since_id).',
  }).cell();
  const drops = new CounterFamily(registry, {
    name: `${METRIC_PREFIX}sse_slow_client_drops_total`,
    help: 'SSE clients disconnected because their backlog exceeded SSE_MAX_BUFFER_BYTES.',
  }).cell();
  // One event frame is written to every client watching the session in turn: remember the
  // last chunk's size so it is measured once, not once per client.
  let lastChunk = '';
  let lastBytes = 0;
  return {
    opened: () => opened.value++,
    written(chunk) {
      if (chunk !== lastChunk) {
        lastChunk = chunk;
        lastBytes = Buffer.byteLength(chunk);
      }
      frames.value++;
      bytes.value += lastBytes;
    },
    cycled: () => cycles.value++,
    dropped: () => drops.value++,
  };
}
