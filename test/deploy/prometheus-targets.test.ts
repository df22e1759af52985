import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '../helpers/service-process.js';

/**
 * deploy/monitoring/prometheus.yaml scrapes the instances of deploy/compose.yaml (issue 30 item 16):
 * it named `ass1`/`ass2`, which no compose service is, and compose gave the instances no way to
 * turn /metrics on. Every target must be a compose service that runs the image on that port with
 * METRICS_TOKEN passed through, and every instance must be scraped.
 */

interface ComposeService {
  build?: unknown;
  image?: string;
  environment?: Record<string, string>;
}

const compose = parseYaml(readFileSync(`${ROOT}/deploy/compose.yaml`, 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const prometheus = parseYaml(readFileSync(`${ROOT}/deploy/monitoring/prometheus.yaml`, 'utf8')) as {
  scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
};

it('prometheus.yaml targets are the compose file instances, on their port, each able to turn metrics on', () => {
  const instances = Object.entries(compose.services)
    .filter(([, s]) => s.image === 'agent-session-service:local')
    .map(([name]) => name);
  assert.ok(instances.length >= 2, `instances in compose.yaml: ${instances.join(', ')}`);
  const targets = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
  for (const target of targets) {
    const [host, port] = target.split(':') as [string, string];
    const service = compose.services[host];
    assert.ok(service, `${target}: no compose service named ${host} (services: ${Object.keys(compose.services).join(', ')})`);
    assert.ok(instances.includes(host), `${target}: ${host} is not a service instance`);
    assert.equal(service.environment?.['PORT'], port, `${target}: the instance listens on ${service.environment?.['PORT']}`);
    assert.ok(service.environment && 'METRICS_TOKEN' in service.environment, `${host} passes METRICS_TOKEN`);
  }
  assert.deepEqual(targets.map((t) => t.split(':')[0]).sort(), [...instances].sort(), 'every instance is scraped');
});
