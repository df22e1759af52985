/**
 * The per-conversation database work of bench/real-path in-process, without transport, bus
 * load or LLM: CPU µs of one session create (`SessionService.create`) plus one model resolve
 * (`modelResolver.resolve` of an `openai_completions` model), the figure to compare changes to
 * session creation and model resolution by on a busy machine (run.ts's turns/s and CPU per turn
 * move with other load):
 *
 *   node --experimental-async-context-frame --import tsx bench/real-path/setup-micro.ts [ROOT] [postgres|pglite] [N]
 *
 * ROOT: the checkout to measure (default: this one), e.g. a worktree at an earlier commit.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? resolve(dirname(fileURLToPath(import.meta.url)), '../..'));
const mode = (process.argv[3] ?? 'postgres') as 'postgres' | 'pglite';
const n = Number(process.argv[4] ?? 400);
const { startTestApp } = (await import(`${root}/test/helpers/app.ts`)) as typeof import('../../test/helpers/app.js');
const cleanups: (() => unknown)[] = [];
const app = await startTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) }, { mode });
const s = app.app.services;
const [admin] = await s.store.sql<{ organization_id: string; id: string }>(
  'select organization_id, id from users where operator = true limit 1',
);
const principal = {
  org_id: admin!.organization_id,
  user_id: admin!.id,
  role: 'admin',
  operator: true,
  via: 'api_key',
  key_id: 'bench',
} as never;
const provider = await app.request('POST', '/v1/llm-providers', {
  body: { name: 'f', provider_type: 'openai_completions', api_key: 'k', base_url: 'http://127.0.0.1:9/v1' },
});
const model = await app.request('POST', `/v1/llm-providers/${provider.body.id}/models`, { body: { model_id: 'gpt-bench' } });
const agent = await app.request('POST', '/v1/agents', {
  body: { name: 'a', system_prompt: 'x', capabilities: ['current_time'], default_model_id: model.body.id },
});
if (agent.status !== 201) throw new Error(`set-up failed: ${agent.status} ${agent.text}`);
const once = async () => {
  await app.app.modules.sessions.service.create(principal, { agent_id: agent.body.id } as never);
  await app.app.modules.llmModels.modelResolver.resolve(admin!.organization_id, model.body.id);
};
for (let i = 0; i < 100; i++) await once();
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < n; i++) await once();
const c = process.cpuUsage(c0);
process.stdout.write(
  JSON.stringify({
    root,
    mode,
    n,
    cpuUsPerCreateAndResolve: Math.round((c.user + c.system) / n),
    wallMsPer: Number(((performance.now() - t0) / n).toFixed(2)),
  }) + '\n',
);
for (const fn of cleanups.reverse()) await fn();
process.exit(0);
