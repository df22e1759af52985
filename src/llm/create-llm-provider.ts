import { createAnthropicProvider } from './anthropic.js';
import { createGeminiProvider } from './gemini.js';
import { createLlmsimProvider } from './llmsim.js';
import { createOpenAiCompletionsProvider } from './openai-completions.js';
import { createOpenAiResponsesProvider } from './openai-responses.js';
import { defaultLlmRetryOptions, type LlmRetryOptions } from './retry.js';
import type { LlmObserver, LlmProvider, LlmProviderConfig } from './types.js';

export interface LlmProviderOptions extends LlmRetryOptions {
  /** Metrics (src/observability): wraps every provider built and hears of each retry; absent: none. */
  observer?: LlmObserver;
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
  const { observer, ...retryOpts } = opts;
  const retry = { ...defaultLlmRetryOptions(), ...retryOpts };
  checkOptions(retry);
  if (!observer) return buildProvider(config, retry);
  const sleep = retry.sleep;
  // Every sleep of the retry loop is the pause before a retry.
  retry.sleep = (ms, signal) => {
    observer.retried(config.provider_type);
    return sleep(ms, signal);
  };
  return observer.wrap(buildProvider(config, retry));
}

function buildProvider(config: LlmProviderConfig, retry: LlmRetryOptions): LlmProvider {
  switch (config.provider_type) {
    case 'openai':
      return createOpenAiResponsesProvider(config, retry);
    case 'openai_completions':
      return createOpenAiCompletionsProvider(config, retry);
    case 'anthropic':
      return createAnthropicProvider(config, retry);
    case 'gemini':
      return createGeminiProvider(config, retry);
    case 'llmsim':
      return createLlmsimProvider(retry);
    default: {
      const unknown: never = config.provider_type;
      throw new TypeError(`unknown provider_type ${String(unknown)}`);
    }
  }
}
