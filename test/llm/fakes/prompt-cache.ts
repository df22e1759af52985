import { createHash } from 'node:crypto';
import type { FakeReply } from './fake-server.js';

/**
 * The vendors' prompt caches, simulated for the wire fakes (issue 26: "a long session reports
 * cache_read_tokens on most steps"). Each returns the usage a reply to a request body reports:
 * all of its input, and the part a real cache would have served. Tokens are characters / 4.
 *  - OpenAI: a request read from the cache the prefix it shares, whole items (instructions,
 *    tools, input items or chat messages), with the previous request that carried the same
 *    `prompt_cache_key`; a request without a key reads nothing.
 *  - Anthropic: each `cache_control` breakpoint writes the prefix up to it (tools, system, then
 *    messages, block by block); a request reads the longest written prefix that ends at one of
 *    its block boundaries at or before its last breakpoint (the API looks back from it).
 */
export type FakeUsage = NonNullable<FakeReply['usage']>;

const tokens = (chars: number) => Math.ceil(chars / 4);
const OUTPUT_TOKENS = 5;

function usageOf(parts: readonly string[], cachedParts: number): FakeUsage {
  const chars = (n: number) => parts.slice(0, n).reduce((a, p) => a + p.length, 0);
  return { input_tokens: tokens(chars(parts.length)), output_tokens: OUTPUT_TOKENS, cache_read_tokens: tokens(chars(cachedParts)) };
}

/** OpenAI Responses or Chat Completions, by the body's shape. */
export function openAiPromptCache(): (body: any) => FakeUsage {
  const lastByKey = new Map<string, string[]>();
  return (body) => {
    const items: unknown[] = Array.isArray(body?.messages) ? body.messages : Array.isArray(body?.input) ? body.input : [];
    const parts = [JSON.stringify(body?.instructions ?? null), JSON.stringify(body?.tools ?? null), ...items.map((i) => JSON.stringify(i))];
    const key = typeof body?.prompt_cache_key === 'string' ? body.prompt_cache_key : null;
    const previous = key ? (lastByKey.get(key) ?? []) : [];
    let shared = 0;
    while (shared < parts.length && shared < previous.length && parts[shared] === previous[shared]) shared++;
    if (key) lastByKey.set(key, parts);
    return usageOf(parts, shared);
  };
}

/** One block of an Anthropic request in cache order, without its breakpoint mark, and whether it carries one. */
function anthropicBlocks(body: any): { text: string; breakpoint: boolean }[] {
  const block = (where: string, b: any) => {
    const { cache_control, ...rest } = typeof b === 'string' ? { text: b } : b;
    return { text: `${where}:${JSON.stringify(rest)}`, breakpoint: cache_control !== undefined };
  };
  const out = [...(body?.tools ?? []).map((t: any) => block('tool', t))];
  const system = typeof body?.system === 'string' ? [{ type: 'text', text: body.system }] : (body?.system ?? []);
  out.push(...system.map((b: any) => block('system', b)));
  for (const [i, m] of (body?.messages ?? []).entries()) {
    const content = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    out.push(...content.map((b: any) => block(`${i}:${m.role}`, b)));
  }
  return out;
}

export function anthropicPromptCache(): (body: any) => FakeUsage {
  const written = new Set<string>();
  return (body) => {
    const blocks = anthropicBlocks(body);
    const prefixes: string[] = [];
    let h = '';
    for (const b of blocks) prefixes.push((h = createHash('sha256').update(h).update(b.text).digest('hex')));
    const last = blocks.map((b) => b.breakpoint).lastIndexOf(true);
    let hit = last;
    while (hit >= 0 && !written.has(prefixes[hit]!)) hit--;
    for (const [i, b] of blocks.entries()) if (b.breakpoint) written.add(prefixes[i]!);
    return usageOf(
      blocks.map((b) => b.text),
      hit + 1,
    );
  };
}
