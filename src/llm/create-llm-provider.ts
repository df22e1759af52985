import { createLlmsimProvider } from './llmsim.js';
import type { LlmsimLimits } from './llmsim-directives.js';
import { defaultLlmRetryOptions, type LlmRetryOptions } from './retry.js';
import type { LlmObserver, LlmProvider, LlmProviderConfig, LlmProviderType, LlmRequest, LlmStreamEvent } from './types.js';

export interface LlmProviderOptions extends LlmRetryOptions {
  /** Metrics (src/observability): wraps every provider built and hears of each retry; absent: none. */
  observer?: LlmObserver;
  /** Bounds on the built-in simulator's directives (defaults of `defaultLlmsimLimits`). */
  llmsim?: LlmsimLimits;
}

function checkOptions(opts: LlmRetryOptions): void {
  for (const key of ['maxRetries', 'baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    if (!Number.isInteger(opts[key]) || opts[key] < 0) throw new RangeError(`LLM provider option ${key} must be a non-negative integer`);
  }
}

/**
 * Builds the provider for one provider record. Retries: `maxRetries` (default 3) with
 * exponential backoff from `baseDelayMs` (default 500 ms), honouring Retry-After up to
 * `maxRetryAfterMs` (default 60 s); the SDKs' own retries are disabled.
 */
export function createLlmProvider(config: LlmProviderConfig, opts: Partial<LlmProviderOptions> = {}): LlmProvider {
  const { observer, llmsim, ...retryOpts } = opts;
  const retry = { ...defaultLlmRetryOptions(), ...retryOpts };
  checkOptions(retry);
  if (!observer) return buildProvider(config, retry, llmsim);
  const sleep = retry.sleep;
  // Every sleep of the retry loop is the pause before a retry.
  retry.sleep = (ms, signal) => {
    observer.retried(config.provider_type);
    return sleep(ms, signal);
  };
  return observer.wrap(buildProvider(config, retry, llmsim));
}

type VendorProviderFactory = (config: LlmProviderConfig, retry: LlmRetryOptions) => LlmProvider;

/**
 * The vendor providers, each module (and its SDK) imported at the first call of a provider of
 * its type: the SDKs took 0.35-0.9 s each to load at start, on every instance, although most
 * deployments use one vendor or none (issue 13 item 7).
 */
const VENDOR_FACTORIES: Record<Exclude<LlmProviderType, 'llmsim'>, () => Promise<VendorProviderFactory>> = {
  openai: async () => (await import('./openai-responses.js')).createOpenAiResponsesProvider,
  openai_completions: async () => (await import('./openai-completions.js')).createOpenAiCompletionsProvider,
  anthropic: async () => (await import('./anthropic.js')).createAnthropicProvider,
  gemini: async () => (await import('./gemini.js')).createGeminiProvider,
};

/** A provider whose vendor module is loaded, and the vendor's provider built, at its first call. */
function lazyVendorProvider(type: Exclude<LlmProviderType, 'llmsim'>, config: LlmProviderConfig, retry: LlmRetryOptions): LlmProvider {
  let built: Promise<LlmProvider> | undefined;
  let ready: LlmProvider | undefined;
  const provider = () =>
    (built ??= VENDOR_FACTORIES[type]().then((create) => {
      ready = create(config, retry);
      return ready;
    }));
  async function* firstStream(req: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    yield* (await provider()).stream(req);
  }
  return {
    type,
    // Once built, the vendor's stream is handed out as it is: a wrapping generator costs a promise per event.
    stream: (req) => (ready ? ready.stream(req) : firstStream(req)),
    listModels: async () => {
      const p = await provider();
      return p.listModels ? p.listModels() : [];
    },
  };
}

function buildProvider(config: LlmProviderConfig, retry: LlmRetryOptions, llmsim?: LlmsimLimits): LlmProvider {
  switch (config.provider_type) {
    case 'openai':
    case 'openai_completions':
    case 'anthropic':
    case 'gemini':
      return lazyVendorProvider(config.provider_type, config, retry);
    case 'llmsim':
      return createLlmsimProvider(retry, llmsim);
    default: {
      const unknown: never = config.provider_type;
      throw new TypeError(`unknown provider_type ${String(unknown)}`);
    }
  }
}
