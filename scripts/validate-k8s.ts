/**
 * Validates the Kubernetes manifests in deploy/k8s (or the files/directories given):
 *   node --import tsx scripts/validate-k8s.ts [path…]
 * Every document is checked against the Kubernetes JSON Schema of its apiVersion and kind (the
 * compiled validators of the kubernetes-models package, from npm: no network at run time),
 * then against the service's own rules: every environment variable given to the service
 * container is a setting src/config.ts reads; EXPECTED_INSTANCES equals the replicas of the
 * instances that serve HTTP; the probes and the Service hit the port the service listens on;
 * selectors match pod labels; the grace period outlasts SHUTDOWN_TIMEOUT_MS. Exit code 1 and one
 * line per problem when anything is wrong. Limit: fields unknown to Kubernetes are not refused
 * (the schemas allow them, like kubeconform without --strict).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES } from '../src/config.js';

/** Read by uWebSockets.js itself, not by src/config.ts (docs/operations.md, section 17). */
const OTHER_VARIABLES = ['UWS_HTTP_MAX_HEADERS_SIZE', 'NODE_OPTIONS'];
const SERVICE_IMAGE = /agent-session-service/;

/** The parts of the objects the service rules read (the schemas check the rest). */
interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: K8sSpec;
  data?: Record<string, string>;
}

interface K8sSpec {
  replicas?: number;
  /** A Service's selector is a label map; a workload's or PDB's has matchLabels. */
  selector?: Record<string, unknown> & { matchLabels?: Record<string, string> };
  template?: {
    metadata?: { labels?: Record<string, string> };
    spec?: { terminationGracePeriodSeconds?: number; containers?: Container[] };
  };
}

interface Container {
  name?: string;
  image?: string;
  envFrom?: { configMapRef?: { name?: string } }[];
  env?: { name: string; value?: string }[];
  ports?: { name?: string; containerPort: number }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
}

interface Probe {
  httpGet?: { path?: string; port?: number | string };
}

export interface Problem {
  file: string;
  object: string;
  message: string;
}

/** The manifests (`*.yaml`, `*.yml`) under each path. */
export function manifestFiles(paths: string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
          .map((f) => join(p, f))
      : [p],
  );
}

/** Every problem of the manifests in `files`, checked together (a Service may select another file's pods). */
export async function validateManifests(files: string[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const objects: { file: string; obj: K8sObject }[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (doc.errors.length) {
        problems.push({ file, object: '-', message: `YAML: ${doc.errors[0]!.message}` });
        continue;
      }
      const obj = doc.toJS() as K8sObject | null;
      if (obj) objects.push({ file, obj });
    }
  }
  for (const { file, obj } of objects) {
    const name = `${obj.kind ?? '?'}/${obj.metadata?.name ?? '?'}`;
    const schemaProblem = await checkSchema(obj);
    if (schemaProblem) problems.push({ file, object: name, message: schemaProblem });
  }
  for (const p of serviceRules(objects)) problems.push(p);
  return problems;
}

async function checkSchema(obj: K8sObject): Promise<string | undefined> {
  if (!obj.apiVersion || !obj.kind) return 'apiVersion and kind are required';
  let model: (new (data: unknown) => { validate(): void }) | undefined;
  try {
    const mod = (await import(`kubernetes-models/${obj.apiVersion}`)) as Record<string, new (data: unknown) => { validate(): void }>;
    model = mod[obj.kind];
  } catch {
    return `unknown apiVersion ${obj.apiVersion}`;
  }
  if (!model) return `unknown kind ${obj.kind} in ${obj.apiVersion}`;
  try {
    new model(obj).validate();
  } catch (err) {
    return `schema: ${(err as Error).message}`;
  }
  return undefined;
}

function serviceRules(objects: { file: string; obj: K8sObject }[]): Problem[] {
  const problems: Problem[] = [];
  const configMaps = new Map(objects.filter((o) => o.obj.kind === 'ConfigMap').map((o) => [o.obj.metadata?.name, o.obj.data ?? {}]));
  const workloads = objects.filter((o) => ['Deployment', 'StatefulSet'].includes(o.obj.kind ?? ''));
  const known = new Set([...CONFIG_VARIABLES, ...OTHER_VARIABLES]);
  let servingReplicas = 0;
  const expected = new Set<string>();
  for (const { file, obj } of workloads) {
    const object = `${obj.kind}/${obj.metadata?.name}`;
    const add = (message: string) => problems.push({ file, object, message });
    const spec = obj.spec ?? {};
    const podLabels: Record<string, string> = spec.template?.metadata?.labels ?? {};
    for (const [k, v] of Object.entries(spec.selector?.matchLabels ?? {})) {
      if (podLabels[k] !== v) add(`selector ${k}=${v} does not match the pod labels`);
    }
    for (const c of spec.template?.spec?.containers ?? []) {
      if (!SERVICE_IMAGE.test(c.image ?? '')) continue;
      const env: Record<string, string | undefined> = {};
      for (const ref of c.envFrom ?? []) {
        const name = ref.configMapRef?.name;
        if (name === undefined) continue;
        const data = configMaps.get(name);
        if (!data) add(`container ${c.name}: ConfigMap ${name} is not in these manifests`);
        else Object.assign(env, data);
      }
      for (const e of c.env ?? []) env[e.name] = e.value ?? '(from a reference)';
      for (const key of Object.keys(env))
        if (!known.has(key)) add(`container ${c.name}: ${key} is not a setting of the service (src/config.ts)`);
      const port = Number(env['PORT'] ?? 8080);
      const ports = c.ports ?? [];
      const portOf = (p: unknown) => (typeof p === 'number' ? p : ports.find((x) => x.name === p)?.containerPort);
      if (!ports.some((p) => p.containerPort === port)) add(`container ${c.name}: no containerPort ${port} (PORT)`);
      if (env['HOST'] !== '0.0.0.0' && env['HOST'] !== '::')
        add(`container ${c.name}: HOST must be 0.0.0.0 (or ::) in a pod, else probes and the Service cannot reach it`);
      for (const probe of ['startupProbe', 'readinessProbe'] as const) {
        const get = c[probe]?.httpGet;
        if (!get) add(`container ${c.name}: ${probe} must GET /health`);
        else if (get.path !== '/health' || portOf(get.port) !== port) add(`container ${c.name}: ${probe} must GET /health on port ${port}`);
      }
      const grace = Number(spec.template?.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
      const shutdown = Number(env['SHUTDOWN_TIMEOUT_MS'] ?? 10_000);
      if (grace < shutdown + 5_000) add(`terminationGracePeriodSeconds ${grace / 1000} must exceed SHUTDOWN_TIMEOUT_MS ${shutdown} + 5 s`);
      if ((env['ROLE'] ?? 'all') !== 'worker') {
        servingReplicas += Number(spec.replicas ?? 1);
        expected.add(env['EXPECTED_INSTANCES'] ?? '1');
      }
    }
  }
  if (expected.size > 1)
    problems.push({ file: '-', object: '-', message: `instances disagree on EXPECTED_INSTANCES: ${[...expected].join(', ')}` });
  else if (expected.size === 1 && Number([...expected][0]) !== servingReplicas) {
    problems.push({ file: '-', object: '-', message: `EXPECTED_INSTANCES ${[...expected][0]} but ${servingReplicas} replicas serve HTTP` });
  }
  // Services and disruption budgets select existing pods.
  for (const { file, obj } of objects.filter((o) => o.obj.kind === 'Service' || o.obj.kind === 'PodDisruptionBudget')) {
    const selector = (obj.kind === 'Service' ? obj.spec?.selector : obj.spec?.selector?.matchLabels) ?? {};
    const matches = workloads.some(({ obj: w }) =>
      Object.entries(selector).every(([k, v]) => w.spec?.template?.metadata?.labels?.[k] === v),
    );
    if (!matches)
      problems.push({ file, object: `${obj.kind}/${obj.metadata?.name}`, message: 'selector matches no pod template in these manifests' });
  }
  return problems;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const files = manifestFiles(args.length ? args : [resolve(import.meta.dirname, '../deploy/k8s')]);
  validateManifests(files).then(
    (problems) => {
      for (const p of problems) console.error(`${p.file}: ${p.object}: ${p.message}`);
      console.log(`${files.length} manifest files: ${problems.length ? `${problems.length} problems` : 'valid'}`);
      process.exit(problems.length ? 1 : 0);
    },
    (err: unknown) => {
      console.error(`validate-k8s: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(2);
    },
  );
}
