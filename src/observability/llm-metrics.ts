/**
 * LLM call metrics through the provider factory's observer hook (src/llm/create-llm-provider.ts):
 * each `stream()` call is measured — outcome, duration, time to first output, tokens in, out and
 * read from cache — by provider type and vendor model; retries by provider type.
 */
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { LlmError, LLM_PROVIDER_TYPES, type LlmObserver, type LlmProvider, type LlmRequest, type LlmStreamEvent } from '../llm/index.js';
import { CounterFamily, HistogramFamily, LONG_BUCKETS_S, type CounterCell, type HistogramCell } from './cells.js';
import { METRIC_PREFIX } from './names.js';

interface ModelCells {
  ok: CounterCell;
  aborted: CounterCell;
  duration: HistogramCell;
  firstOutput: HistogramCell;
  input: CounterCell;
  output: CounterCell;
  cached: CounterCell;
  /** Error counters by LlmError kind. */
  errors: Map<string, CounterCell>;
}

const FIRST_OUTPUT_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60] as const;

export function createLlmMetrics(registry: Registry): LlmObserver {
  const p = METRIC_PREFIX;
  const labelNames = ['provider', 'model'];
  const requests = new CounterFamily(registry, {
    name: `${p}llm_requests_total`,
    help: 'LLM calls (one per reason step, retries inside), by provider type, model and outcome (ok, error, aborted).',
    labelNames: [...labelNames, 'outcome'],
  });
  const errors = new CounterFamily(registry, {
    name: `${p}llm_errors_total`,
    help: 'LLM calls that failed, by provider type, model and error kind.',
    labelNames: [...labelNames, 'kind'],
  });
  const duration = new HistogramFamily(registry, {
    name: `${p}llm_request_duration_seconds`,
    help: 'LLM call duration, retries included.',
    labelNames,
    buckets: LONG_BUCKETS_S,
  });
  const firstOutput = new HistogramFamily(registry, {
    name: `${p}llm_time_to_first_output_seconds`,
    help: 'From the call to its first streamed output (text, thinking or tool call).',
    labelNames,
    buckets: FIRST_OUTPUT_BUCKETS_S,
  });
  const tokens = (name: string, help: string) => new CounterFamily(registry, { name: `${p}${name}`, help, labelNames });
  const input = tokens('llm_input_tokens_total', 'Prompt tokens sent, cached ones included.');
  const output = tokens('llm_output_tokens_total', 'Tokens generated, thinking included where the vendor reports it.');
  const cached = tokens('llm_cache_read_tokens_total', 'Prompt tokens read from the vendor prompt cache.');
  const retriesFamily = new CounterFamily(registry, {
    name: `${p}llm_retries_total`,
    help: 'LLM call retries after 429, 5xx or network errors, by provider type.',
    labelNames: ['provider'],
  });
  const retries = new Map(LLM_PROVIDER_TYPES.map((t) => [t as string, retriesFamily.cell({ provider: t })]));
  const byProvider = new Map<string, Map<string, ModelCells>>();

  function cellsOf(provider: string, model: string): ModelCells {
    let models = byProvider.get(provider);
    if (!models) byProvider.set(provider, (models = new Map()));
    let c = models.get(model);
    if (!c) {
      const labels = { provider, model };
      c = {
        ok: requests.cell({ ...labels, outcome: 'ok' }),
        aborted: requests.cell({ ...labels, outcome: 'aborted' }),
        duration: duration.cell(labels),
        firstOutput: firstOutput.cell(labels),
        input: input.cell(labels),
        output: output.cell(labels),
        cached: cached.cell(labels),
        errors: new Map(),
      };
      models.set(model, c);
    }
    return c;
  }

  function failed(c: ModelCells, provider: string, model: string, err: unknown): void {
    const kind = err instanceof LlmError ? err.kind : 'other';
    let cell = c.errors.get(kind);
    if (!cell) c.errors.set(kind, (cell = errors.cell({ provider, model, kind })));
    cell.inc();
    requests.cell({ provider, model, outcome: 'error' }).inc();
  }

  async function* measured(provider: LlmProvider, req: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const c = cellsOf(provider.type, req.model);
    const started = performance.now();
    let first = true;
    try {
      for await (const ev of provider.stream(req)) {
        if (first && ev.type !== 'usage' && ev.type !== 'done') {
          first = false;
          c.firstOutput.observe((performance.now() - started) / 1000);
        }
        if (ev.type === 'usage') {
          c.input.inc(ev.input_tokens);
          c.output.inc(ev.output_tokens);
          c.cached.inc(ev.cache_read_tokens);
        }
        yield ev;
      }
      c.ok.inc();
    } catch (err) {
      if (req.signal?.aborted) c.aborted.inc();
      else failed(c, provider.type, req.model, err);
      throw err;
    } finally {
      c.duration.observe((performance.now() - started) / 1000);
    }
  }

  return {
    wrap(provider) {
      const wrapped: LlmProvider = { type: provider.type, stream: (req) => measured(provider, req) };
      if (provider.listModels) wrapped.listModels = () => provider.listModels!();
      return wrapped;
    },
    retried(type) {
      retries.get(type)?.inc();
    },
  };
}
