import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp } from '../helpers/app.js';
import { type Scrape, scrape } from '../helpers/prometheus.js';
import { createSession, sendMessage, watch } from '../turns/helpers.js';

const TOKEN = 'metrics-token-0123456789';
const P = 'agent_session_';

/** Counter deltas between two scrapes. */
function moved(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  const had = before.families.has(name) ? before.value(name, labels) : 0;
  return after.value(name, labels) - had;
}

describe('Prometheus /metrics', () => {
  it('GET /metrics - after a real turn (a retried LLM call, a tool, SSE) the counters moved; 401 without the token', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { METRICS_TOKEN: TOKEN } });
    const url = `${app.url}/metrics`;

    const refused: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: TOKEN }];
    for (const headers of refused) {
      const r = await fetch(url, { headers });
      assert.equal(r.status, 401);
      assert.equal(await r.text(), '{"error":"Unauthorized","status":401}');
    }

    const before = await scrape(url, TOKEN);
    const { id } = await createSession(app, { capabilities: ['current_time'] });
    const sse = await watch(app, id);
    t.after(() => sse.close());
    // One server error, retried; then a tool call; then the answer after the tool result.
    const r = await sendMessage(app, id, '@fail server times=1\n@tool get_current_time {"timezone":"UTC"}');
    assert.equal(r.status, 201, r.text);
    await sse.until('session.idled');
    // The worker acknowledges the claim just after session.idled is stored.
    let after = await scrape(url, TOKEN);
    for (let i = 0; i < 100 && moved(before, after, `${P}tasks_completed_total`) === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await scrape(url, TOKEN);
    }

    assert.equal(moved(before, after, `${P}http_requests_total`, { method: 'POST', route: '/v1/sessions/:id/messages', status: '201' }), 1);
    assert.ok(moved(before, after, `${P}http_request_duration_seconds`, { method: 'POST', route: '/v1/sessions/:id/messages' }) === 1);
    assert.ok(after.value(`${P}http_requests_total`, { route: '/metrics', status: '401' }) >= 3, 'refused scrapes are counted too');

    assert.equal(moved(before, after, `${P}turns_started_total`), 1);
    assert.equal(moved(before, after, `${P}turns_completed_total`), 1);
    assert.equal(moved(before, after, `${P}turn_duration_seconds`, { outcome: 'completed' }), 1);
    assert.equal(moved(before, after, `${P}turn_iterations`), 1);
    assert.equal(moved(before, after, `${P}tasks_claimed_total`), 1);
    assert.equal(moved(before, after, `${P}tasks_completed_total`), 1);
    assert.equal(moved(before, after, `${P}turn_claim_wait_seconds`), 1);

    assert.equal(moved(before, after, `${P}tool_executions_total`, { capability: 'current_time', outcome: 'success' }), 1);
    assert.equal(moved(before, after, `${P}tool_execution_duration_seconds`, { capability: 'current_time' }), 1);

    const llm = { provider: 'llmsim', model: 'llmsim' };
    assert.equal(moved(before, after, `${P}llm_requests_total`, { ...llm, outcome: 'ok' }), 2, 'two reason steps');
    // `@fail server times=1` fails the first attempt of each step (both see the directive): two retries.
    assert.equal(moved(before, after, `${P}llm_retries_total`, { provider: 'llmsim' }), 2);
    assert.equal(moved(before, after, `${P}llm_request_duration_seconds`, llm), 2);
    assert.ok(moved(before, after, `${P}llm_input_tokens_total`, llm) > 0);
    assert.ok(moved(before, after, `${P}llm_output_tokens_total`, llm) > 0);
    assert.ok(after.families.has(`${P}llm_cache_read_tokens_total`));

    assert.equal(moved(before, after, `${P}events_appended_total`, { type: 'turn.completed' }), 1);
    assert.equal(moved(before, after, `${P}events_appended_total`, { type: 'tool.completed' }), 1);
    assert.ok(moved(before, after, `${P}event_appends_total`, { result: 'ok' }) >= 3);
    assert.ok(moved(before, after, `${P}event_append_duration_seconds`) >= 3);

    assert.equal(moved(before, after, `${P}sse_connections_opened_total`), 1);
    assert.equal(after.value(`${P}sse_connections`), 1);
    assert.ok(moved(before, after, `${P}sse_frames_written_total`) >= 10, 'every event of the turn was written to the stream');
    assert.ok(moved(before, after, `${P}sse_written_bytes_total`) > 1000);

    assert.equal(after.value(`${P}dependency_up`, { dependency: 'database' }), 1);
    assert.equal(after.value(`${P}dependency_up`, { dependency: 'bus' }), 1);
    assert.equal(after.value(`${P}info`, { mode: 'single', role: 'all' }), 1);
    assert.equal(after.family(`${P}turns_running`).type, 'GAUGE');
    // Process and Node.js metrics under prom-client's standard names.
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.ok(after.families.has(name), name);
    }
    // A turn whose LLM call fails for good: a failed turn, an LLM error by kind.
    const failing = await createSession(app);
    assert.equal((await sendMessage(app, failing.id, '@fail auth')).status, 201);
    let last = after;
    for (let i = 0; i < 200 && moved(after, last, `${P}turns_failed_total`) === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      last = await scrape(url, TOKEN);
    }
    assert.equal(moved(after, last, `${P}turns_failed_total`, { error_code: 'llm_error' }), 1);
    assert.equal(moved(after, last, `${P}turn_duration_seconds`, { outcome: 'failed' }), 1);
    assert.equal(moved(after, last, `${P}llm_errors_total`, { ...llm, kind: 'auth' }), 1);
    assert.equal(moved(after, last, `${P}llm_requests_total`, { ...llm, outcome: 'error' }), 1);
    assert.equal(moved(after, last, `${P}llm_retries_total`), 0, 'auth errors are not retried');

    // The API document lists /metrics (with its media type) and stays valid OpenAPI 3.1.
    const doc = (await app.request('GET', '/api-doc/openapi.json')).body;
    assert.ok(doc.paths['/metrics'].get.responses['200'].content['text/plain; version=0.0.4; charset=utf-8']);
    const validity = await new Validator().validate(doc);
    assert.equal(validity.valid, true, JSON.stringify(validity.errors)?.slice(0, 1000));

    // Conventions: counters end in _total, nothing else does; every own name has a unit or is a count.
    for (const f of after.families.values()) {
      if (!f.name.startsWith(P)) continue;
      assert.equal(f.type === 'COUNTER', f.name.endsWith('_total'), `${f.name} (${f.type})`);
    }
  });

  it('GET /metrics - off by default (404, not in the API document)', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres' });
    assert.equal((await fetch(`${app.url}/metrics`)).status, 404);
    const doc = await app.request('GET', '/api-doc/openapi.json');
    assert.equal(doc.body.paths['/metrics'], undefined);
    assert.ok(doc.body.paths['/v1/durable/metrics/timeseries'], 'the spec endpoint is always there');
  });

  it('METRICS_PORT - /metrics only on the separate listener, open there; 404 on the main port', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { METRICS_PORT: 0 } });
    assert.ok(app.app.metricsUrl);
    assert.equal((await fetch(`${app.url}/metrics`)).status, 404);
    const s = await scrape(`${app.app.metricsUrl}/metrics`);
    assert.equal(s.value(`${P}info`, { mode: 'single' }), 1);
    assert.equal((await fetch(`${app.app.metricsUrl}/health`)).status, 404, 'the metrics listener serves /metrics alone');
  });

  it('METRICS_PORT + METRICS_TOKEN - the separate listener wants the token too', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { METRICS_PORT: 0, METRICS_TOKEN: TOKEN } });
    assert.equal((await fetch(`${app.app.metricsUrl}/metrics`)).status, 401);
    await scrape(`${app.app.metricsUrl}/metrics`, TOKEN);
    assert.equal((await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
  });
});
