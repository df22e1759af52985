/**
 * The LangGraph.js dev server (`langgraph dev`) running peers/langgraph/graph.mjs. Its setting is
 * `--n-jobs-per-worker` (runs at a time): the default 10 caps it at 10 runs, and 200 costs it
 * about 1.5× more CPU per turn (issue 34), so the bench sweeps it.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../lib/process.js';
import { npmInstall } from './install.js';
import type { Peer } from './peer.js';

const PACKAGES = [
  '@langchain/langgraph-cli@1.5.1',
  '@langchain/langgraph@1.7.3',
  '@langchain/openai',
  '@langchain/anthropic',
  '@langchain/core',
  'zod',
];

export function langgraphPeer(root: string): Peer {
  const dir = join(root, 'bench/.cache/langgraph');
  return {
    name: 'langgraph',
    keepsConversation: true,
    client: { target: 'langgraph' },
    providers: ['openai', 'anthropic'],
    ensure(log) {
      const why = npmInstall(
        dir,
        'langgraph',
        PACKAGES,
        ['@langchain/langgraph-cli/dist/cli/cli.mjs', '@langchain/anthropic/package.json'],
        log,
      );
      if (why) return why;
      for (const f of ['graph.mjs', 'langgraph.json']) copyFileSync(join(root, 'bench/real-path/peers/langgraph', f), join(dir, f));
      return null;
    },
    start: ({ fakeOrigin, provider, vendorKey, port, setting }) =>
      startServer({
        name: 'langgraph',
        args: [
          join(dir, 'node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs'),
          'dev',
          '--port',
          String(port),
          '--host',
          '127.0.0.1',
          '--no-browser',
          '--no-reload',
          '--n-jobs-per-worker',
          setting || '10',
        ],
        env: {
          BENCH_PROVIDER: provider,
          BENCH_OPENAI_BASE_URL: `${fakeOrigin}/v1`,
          BENCH_ANTHROPIC_BASE_URL: fakeOrigin,
          BENCH_API_KEY: vendorKey,
          LANGSMITH_TRACING: 'false',
          LANGCHAIN_TRACING_V2: 'false',
          NO_COLOR: '1',
          BROWSER: 'none',
        },
        cwd: dir,
        readyUrl: `http://127.0.0.1:${port}/ok`,
        readyTimeoutMs: 120_000,
      }),
  };
}
