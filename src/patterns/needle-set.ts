/**
 * Many fixed strings found in one pass (Aho–Corasick). `scan` reports, for each position of a text,
 * the longest needle that ends there; the union of those is the union of every occurrence of every
 * needle, found in time linear in the text (times at most the alphabet, for a sibling walk), however
 * many needles there are and however they overlap. The trie lives in typed arrays (children as
 * sibling lists, the root's as a table), so a table of a million nodes costs tens of megabytes.
 * The root's table reaches only the highest first unit of a needle: sized for all of UTF-16 it
 * was 256 KiB allocated and filled per build, also for no needles at all (the act step builds
 * two per tool call, most sessions having no secret: 1.9 % of the service's CPU at K=50).
 */

export interface NeedleSet<L> {
  /**
   * Calls `found(start, end, label)` once per text position that ends an occurrence, with the
   * longest occurrence ending there (`end` exclusive) and its needle's label.
   */
  scan(units: ArrayLike<number>, found: (start: number, end: number, label: L) => void): void;
}

/** Builds the automaton over UTF-16 code units; empty needles are ignored. */
export function buildNeedleSet<L>(needles: readonly { needle: ArrayLike<number>; label: L }[]): NeedleSet<L> {
  let capacity = 1;
  let rootSize = 0;
  for (const { needle } of needles) {
    capacity += needle.length;
    if (needle.length > 0) rootSize = Math.max(rootSize, needle[0]! + 1);
  }
  const firstChild = new Int32Array(capacity).fill(-1);
  const nextSibling = new Int32Array(capacity).fill(-1);
  const unit = new Uint16Array(capacity);
  const fail = new Int32Array(capacity);
  /** Length of the longest needle ending at a node (itself or through its failure links); 0 for none. */
  const outLength = new Int32Array(capacity);
  const outLabel = new Int32Array(capacity).fill(-1);
  const rootChild = new Int32Array(rootSize).fill(-1);
  const labels: L[] = [];
  let nodes = 1;

  const child = (node: number, code: number): number => {
    if (node === 0) return code < rootSize ? rootChild[code]! : -1;
    for (let c = firstChild[node]!; c !== -1; c = nextSibling[c]!) if (unit[c] === code) return c;
    return -1;
  };
  const addChild = (node: number, code: number): number => {
    const c = nodes++;
    unit[c] = code;
    nextSibling[c] = firstChild[node]!;
    firstChild[node] = c;
    if (node === 0) rootChild[code] = c;
    return c;
  };

  for (const { needle, label } of needles) {
    if (needle.length === 0) continue;
    let node = 0;
    for (let i = 0; i < needle.length; i++) {
      const code = needle[i]!;
      const next = child(node, code);
      node = next === -1 ? addChild(node, code) : next;
    }
    if (needle.length > outLength[node]!) {
      outLength[node] = needle.length;
      outLabel[node] = labels.push(label) - 1;
    }
  }

  // Breadth-first: a node's failure link and inherited output come from shallower nodes.
  const queue = new Int32Array(nodes);
  let tail = 0;
  for (let c = firstChild[0]!; c !== -1; c = nextSibling[c]!) queue[tail++] = c;
  for (let head = 0; head < tail; head++) {
    const node = queue[head]!;
    for (let c = firstChild[node]!; c !== -1; c = nextSibling[c]!) {
      const code = unit[c]!;
      let f = fail[node]!;
      let target = child(f, code);
      while (target === -1 && f !== 0) {
        f = fail[f]!;
        target = child(f, code);
      }
      fail[c] = target === -1 ? 0 : target;
      const inherited = fail[c]!;
      if (outLength[inherited]! > outLength[c]!) {
        outLength[c] = outLength[inherited]!;
        outLabel[c] = outLabel[inherited]!;
      }
      queue[tail++] = c;
    }
  }

  return {
    scan(units, found) {
      if (nodes === 1) return;
      let node = 0;
      for (let i = 0; i < units.length; i++) {
        const code = units[i]!;
        let next = child(node, code);
        while (next === -1 && node !== 0) {
          node = fail[node]!;
          next = child(node, code);
        }
        node = next === -1 ? 0 : next;
        const length = outLength[node]!;
        if (length > 0) found(i + 1 - length, i + 1, labels[outLabel[node]!]!);
      }
    },
  };
}
