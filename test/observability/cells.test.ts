import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from '../../src/observability/cells.js';
import { Scrape } from '../helpers/prometheus.js';

describe('metric cells rendered through prom-client', () => {
  it('counters by label set and histograms with cumulative buckets, +Inf, sum and count, in the text format', async () => {
    const registry = new Registry();
    const requests = new CounterFamily(registry, { name: 'x_requests_total', help: 'Requests.', labelNames: ['route', 'status'] });
    const latency = new HistogramFamily(registry, {
      name: 'x_latency_seconds',
      help: 'Latency.',
      labelNames: ['route'],
      buckets: [0.1, 1],
    });
    const a200 = requests.cell({ route: '/a', status: '200' });
    assert.equal(requests.cell({ route: '/a', status: '200' }), a200, 'one cell per label set');
    a200.inc();
    a200.inc(2);
    requests.cell({ route: '/b', status: '404' }).inc();
    const a = latency.cell({ route: '/a' });
    for (const v of [0.05, 0.1, 0.5, 3]) a.observe(v);

    const s = new Scrape(await registry.metrics());
    assert.equal(s.family('x_requests_total').type, 'COUNTER');
    assert.equal(s.value('x_requests_total', { route: '/a', status: '200' }), 3);
    assert.equal(s.value('x_requests_total'), 4);
    assert.equal(s.family('x_latency_seconds').type, 'HISTOGRAM');
    const buckets = Object.fromEntries(s.series('x_latency_seconds_bucket').map((m) => [m.labels!['le'], Number(m.value)]));
    assert.deepEqual(buckets, { '0.1': 2, '1': 3, '+Inf': 4 }, 'cumulative; a value on a bound counts in that bucket');
    assert.equal(Number(s.series('x_latency_seconds_sum')[0]!.value), 3.65);
    assert.equal(s.value('x_latency_seconds', { route: '/a' }), 4);
  });
});
