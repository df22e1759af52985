import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { startTestApp } from '../helpers/app.js';
import { scrape, type Scrape } from '../helpers/prometheus.js';
import { createSession, sendMessage, waitForEvent } from '../turns/helpers.js';

const DIR = new URL('../../deploy/monitoring/', import.meta.url);
const TOKEN = 'monitoring-token-0123456789';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: { summary: string; description?: string };
}

const alerts = (
  parseYaml(readFileSync(new URL('alerts.yaml', DIR), 'utf8')) as { groups: { name: string; rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(new URL('grafana-dashboard.json', DIR), 'utf8')) as {
  uid: string;
  templating: { list: { name: string; query?: unknown }[] };
  panels: { id: number; type: string; title: string; datasource?: unknown; targets?: { expr: string; refId: string }[] }[];
};
const prometheusConfig = parseYaml(readFileSync(new URL('prometheus.yaml', DIR), 'utf8')) as {
  rule_files: string[];
  scrape_configs: { job_name: string }[];
};

/** Every PromQL expression of the alert rules and the dashboard (panels and variables), with where it is. */
const expressions: { where: string; expr: string }[] = [
  ...alerts.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr }))),
  ...dashboard.templating.list
    .filter((v) => typeof v.query === 'string' && v.query.includes('('))
    .map((v) => ({ where: `variable ${v.name}`, expr: String(v.query) })),
];

/** Labels Prometheus adds to every series itself (target labels), and the histogram bucket label. */
const TARGET_LABELS = new Set(['instance', 'job', 'le']);
/** Series Prometheus itself writes per target; not in the service's scrape. */
const PROMETHEUS_OWN = new Set(['up']);

const METRIC_RE = /\b((?:agent_session|process|nodejs)_[a-z0-9_]+|up)\b(?=\s*[{[),\s]|$)/g;

/** The scrape family a name refers to: itself, or the histogram behind `_bucket`/`_sum`/`_count`. */
function familyOf(s: Scrape, name: string): { family: string; series: string } | null {
  if (s.families.has(name)) return { family: name, series: name };
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (m && s.families.get(m[1]!)?.type === 'HISTOGRAM') return { family: m[1]!, series: `${m[1]}_count` };
  return null;
}

/** Whether some series of the family carries the label (histograms: their `_count` series). */
function hasLabel(s: Scrape, name: string, label: string): boolean {
  const f = s.family(name);
  const series = f.type === 'HISTOGRAM' ? s.series(`${name}_count`) : f.metrics;
  return series.some((m) => m.labels && label in m.labels);
}

describe('deploy/monitoring: the dashboard and alert rules', () => {
  it('alerts.yaml - well-formed rules (unique names, for, severity, summary); prometheus.yaml loads it and names the job the rules use', () => {
    assert.ok(alerts.length >= 10);
    assert.equal(new Set(alerts.map((r) => r.alert)).size, alerts.length, 'unique alert names');
    for (const r of alerts) {
      assert.match(r.alert, /^AgentSession[A-Za-z]+$/);
      assert.match(r.for, /^\d+[smh]$/, r.alert);
      assert.ok(['critical', 'warning', 'info'].includes(r.labels.severity), r.alert);
      assert.ok(r.annotations.summary.length > 10, r.alert);
    }
    assert.deepEqual(prometheusConfig.rule_files, ['alerts.yaml']);
    const job = prometheusConfig.scrape_configs[0]!.job_name;
    assert.ok(
      alerts.some((r) => r.expr.includes(`job="${job}"`)),
      'the up alert names the scrape job',
    );
  });

  it('grafana-dashboard.json - panels with unique ids, a datasource and at least one query; balanced expressions', () => {
    assert.equal(dashboard.uid, 'agent-session-service');
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    assert.ok(panels.length >= 20);
    assert.equal(new Set(dashboard.panels.map((p) => p.id)).size, dashboard.panels.length);
    for (const p of panels) {
      assert.ok(p.datasource, p.title);
      assert.ok(p.targets?.length, p.title);
    }
    for (const { where, expr } of expressions) {
      for (const [open, close] of [
        ['(', ')'],
        ['{', '}'],
        ['[', ']'],
      ] as const) {
        assert.equal(expr.split(open).length, expr.split(close).length, `${where}: unbalanced ${open}${close} in ${expr}`);
      }
    }
  });

  it('every metric and label they use exists in a real scrape after turns (a tool, a failed LLM call)', async (t) => {
    const app = await startTestApp(t, { mode: 'postgres', env: { METRICS_TOKEN: TOKEN } });
    const ok = await createSession(app, { capabilities: ['current_time'] });
    assert.equal((await sendMessage(app, ok.id, '@tool get_current_time {"timezone":"UTC"}')).status, 201);
    await waitForEvent(app, ok.id, 'session.idled');
    const failing = await createSession(app);
    assert.equal((await sendMessage(app, failing.id, '@fail auth')).status, 201);
    await waitForEvent(app, failing.id, 'session.idled');
    const s = await scrape(`${app.url}/metrics`, TOKEN);

    const used = new Set<string>();
    for (const { where, expr } of expressions) {
      const names = [...expr.matchAll(METRIC_RE)].map((m) => m[1]!);
      assert.ok(names.length, `${where}: no metric found in ${expr}`);
      for (const name of names) {
        used.add(name);
        if (PROMETHEUS_OWN.has(name)) continue;
        const f = familyOf(s, name);
        assert.ok(f, `${where}: ${name} is not in the scrape`);
        // Labels in the selector right after the name.
        const selector = new RegExp(`\\b${name}\\{([^}]*)\\}`).exec(expr)?.[1] ?? '';
        for (const [, label] of selector.matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g)) {
          if (!TARGET_LABELS.has(label!)) assert.ok(hasLabel(s, f.family, label!), `${where}: ${f.family} has no label ${label}`);
        }
      }
      // Labels grouped by: each must be on one of the metrics of the expression.
      for (const [, list] of expr.matchAll(/\bby \(([^)]*)\)/g)) {
        for (const label of list!.split(',').map((l) => l.trim())) {
          if (TARGET_LABELS.has(label)) continue;
          const families = names.filter((n) => !PROMETHEUS_OWN.has(n)).map((n) => familyOf(s, n)!.family);
          assert.ok(
            families.some((f) => hasLabel(s, f, label)),
            `${where}: no metric of "${expr}" has the label ${label}`,
          );
        }
      }
    }
    t.diagnostic(`${used.size} metric names checked against the scrape`);
    assert.ok(used.size >= 30);
  });
});
