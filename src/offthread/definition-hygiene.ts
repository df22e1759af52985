import { Parser } from 'yaml';

/**
 * Bounds for agent definitions imported as YAML or Markdown front matter, which bypass the JSON
 * pipeline's scan (docs/decisions/0039-input-hygiene.md). The `yaml` composer
 * recurses once per level: a few kilobytes of `[[[…` or `- - - …` overflow the stack, and when
 * that happens inside V8's regexp compiler the process aborts instead of throwing.
 */

interface CstNode {
  type?: string;
  value?: unknown;
  items?: { key?: unknown; value?: unknown }[];
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);

/**
 * True when the YAML text nests collections deeper than `maxDepth`. Reads the concrete syntax tree
 * of yaml's parser, which builds it without recursion, and walks it with an explicit stack.
 */
export function yamlNestsDeeperThan(text: string, maxDepth: number): boolean {
  for (const token of new Parser().parse(text)) {
    const stack: [unknown, number][] = [[token, 0]];
    while (stack.length > 0) {
      const [node, depth] = stack.pop()!;
      if (!node || typeof node !== 'object') continue;
      const { type, value, items } = node as CstNode;
      if (type === 'document') stack.push([value, depth]);
      else if (type && COLLECTIONS.has(type)) {
        if (depth + 1 > maxDepth) return true;
        for (const item of items ?? []) stack.push([item.key, depth + 1], [item.value, depth + 1]);
      }
    }
  }
  return false;
}
