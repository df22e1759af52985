import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { manifestFiles, validateManifests } from '../../scripts/validate-k8s.js';

const K8S = resolve(import.meta.dirname, '../../deploy/k8s');
const APP = join(K8S, 'agent-session-service.yaml');

/** Problems of the shipped manifests with one edit applied to the app manifest. */
async function problemsWith(t: { after(fn: () => unknown): void }, from: string | RegExp, to: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const text = readFileSync(APP, 'utf8');
  const edited = text.replace(from, to);
  assert.notEqual(edited, text, `the edit ${from} applies`);
  writeFileSync(join(dir, 'app.yaml'), edited);
  writeFileSync(join(dir, 'nats.yaml'), readFileSync(join(K8S, 'nats.yaml'), 'utf8'));
  return (await validateManifests(manifestFiles([dir]))).map((p) => `${p.object}: ${p.message}`);
}

describe('deploy/k8s manifests (scripts/validate-k8s.ts)', () => {
  it('are valid Kubernetes objects that follow the service rules', async () => {
    const files = manifestFiles([K8S]);
    assert.ok(files.length >= 2);
    assert.deepEqual(await validateManifests(files), []);
  });

  it('a schema violation, an unknown setting, a wrong instance count or probe are each reported', async (t) => {
    assert.match(
      (await problemsWith(t, 'replicas: 2', 'replicas: two')).join('\n'),
      /Deployment\/agent-session-service: schema: .*replicas must be integer/,
    );
    assert.match(
      (await problemsWith(t, '- name: DATABASE_URL', '- name: DATABASE_URI')).join('\n'),
      /DATABASE_URI is not a setting of the service/,
    );
    assert.match(
      (await problemsWith(t, 'EXPECTED_INSTANCES: "2"', 'EXPECTED_INSTANCES: "3"')).join('\n'),
      /EXPECTED_INSTANCES 3 but 2 replicas serve HTTP/,
    );
    assert.match(
      (await problemsWith(t, /readinessProbe:\n(\s+)httpGet:\n(\s+)path: \/health/, 'readinessProbe:\n$1httpGet:\n$2path: /healthz')).join(
        '\n',
      ),
      /readinessProbe must GET \/health/,
    );
    assert.match(
      (
        await problemsWith(
          t,
          'kind: PodDisruptionBudget\nmetadata:\n  name: agent-session-service\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: agent-session-service',
          'kind: PodDisruptionBudget\nmetadata:\n  name: agent-session-service\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: agent-sessions',
        )
      ).join('\n'),
      /PodDisruptionBudget\/agent-session-service: selector matches no pod template/,
    );
  });
});
