import type { LlmErrorKind } from './errors.js';

/** What the last user message asks the simulator to do (syntax in docs/llmsim.md). */
export interface LlmsimScript {
  /** The user text without directive lines. */
  text: string;
  /** `@tokens N [delay=ms]`: stream N filler tokens instead of echoing. */
  tokens?: { count: number; delayMs: number };
  /** `@think N [delay=ms]`: stream N thinking tokens first. */
  think?: { count: number; delayMs: number };
  /** `@tool name {json}` lines: tool calls of one step (several = parallel). */
  tools: { name: string; rawArguments: string }[];
  /** `@fail kind [times=N] [after=N] [retry_after=ms]`. */
  fail?: { kind: LlmErrorKind; times?: number; after?: number; retryAfterMs?: number };
  /** `@loop [name {json}]`: request a tool on every step, even after tool results. */
  loop?: { name?: string; rawArguments: string };
  /** `@sleep ms`: wait before the first output. */
  sleepMs?: number;
  /** `@echo`: echo the text even when other directives are present. */
  echo: boolean;
  /** `@json TEXT` (the first reply only) or `@json-always TEXT` (repair steps too): the reply's text. */
  json?: { text: string; always: boolean };
}

const FAIL_KINDS: readonly LlmErrorKind[] = ['auth', 'rate_limit', 'network', 'server', 'bad_request'];

/** The operator's bounds on directives (LLMSIM_MAX_TOKENS, LLMSIM_MAX_WAIT_MS): a member's message cannot lift them. */
export interface LlmsimLimits {
  /** Most tokens of one `@tokens` or `@think` (default 10 000). */
  maxTokens: number;
  /** Most time one call waits in all, `@sleep` and every `delay=` together, in ms (default 60 000). */
  maxWaitMs: number;
  /**
   * The simulator's context window in its tokens (words, see docs/llmsim.md; default 1 000 000):
   * a larger request fails as a vendor's "context length exceeded" does. Small windows let tests
   * drive compaction (LLMSIM_CONTEXT_WINDOW).
   */
  contextWindow: number;
}

export const DEFAULT_LLMSIM_MAX_TOKENS = 10_000;
export const DEFAULT_LLMSIM_MAX_WAIT_MS = 60_000;
export const DEFAULT_LLMSIM_CONTEXT_WINDOW = 1_000_000;

export function defaultLlmsimLimits(): LlmsimLimits {
  return { maxTokens: DEFAULT_LLMSIM_MAX_TOKENS, maxWaitMs: DEFAULT_LLMSIM_MAX_WAIT_MS, contextWindow: DEFAULT_LLMSIM_CONTEXT_WINDOW };
}

function options(words: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of words) {
    const m = /^([a-z_]+)=(\d+)$/.exec(w);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

function count(word: string | undefined, max: number): number | undefined {
  const n = Number(word);
  return Number.isInteger(n) && n >= 0 ? Math.min(n, max) : undefined;
}

/** Applies one directive line to the script; returns false when the line is not one. */
function applyDirective(script: LlmsimScript, line: string, limits: LlmsimLimits): boolean {
  const [keyword, ...rest] = line.slice(1).split(/\s+/);
  const opts = options(rest);
  const n = count(rest[0], keyword === 'sleep' ? limits.maxWaitMs : limits.maxTokens);
  const afterName = line.slice(1 + keyword!.length).trim();
  switch (keyword) {
    case 'tokens':
      if (n === undefined) return false;
      script.tokens = { count: n, delayMs: opts['delay'] ?? 0 };
      return true;
    case 'think':
      if (n === undefined) return false;
      script.think = { count: n, delayMs: opts['delay'] ?? 0 };
      return true;
    case 'tool': {
      const name = rest[0];
      if (!name) return false;
      script.tools.push({ name, rawArguments: afterName.slice(name.length).trim() || '{}' });
      return true;
    }
    case 'fail': {
      const kind = FAIL_KINDS.find((k) => k === rest[0]);
      if (!kind) return false;
      script.fail = { kind, times: opts['times'], after: opts['after'], retryAfterMs: opts['retry_after'] };
      return true;
    }
    case 'loop': {
      const name = rest[0];
      script.loop = name ? { name, rawArguments: afterName.slice(name.length).trim() || '{}' } : { rawArguments: '{}' };
      return true;
    }
    case 'sleep':
      if (n === undefined) return false;
      script.sleepMs = n;
      return true;
    case 'echo':
      script.echo = true;
      return true;
    case 'json':
    case 'json-always':
      if (!afterName) return false;
      script.json = { text: afterName, always: keyword === 'json-always' };
      return true;
    default:
      return false;
  }
}

/** Parses directive lines (`@keyword …`, one per line); other lines are plain text. Counts and `@sleep` are clamped to `limits`. */
export function parseLlmsimScript(input: string, limits: LlmsimLimits = defaultLlmsimLimits()): LlmsimScript {
  const script: LlmsimScript = { text: '', tools: [], echo: false };
  const textLines: string[] = [];
  for (const line of input.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!(trimmed.startsWith('@') && applyDirective(script, trimmed, limits))) textLines.push(line);
  }
  script.text = textLines.join('\n').trim();
  return script;
}
