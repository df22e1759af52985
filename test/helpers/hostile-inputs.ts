/**
 * Request bodies that stalled the event loop before issue 12
 * (docs/decisions/0046-linear-time-patterns.md, docs/decisions/0047-caller-documents-bounded.md), shared by the security tests.
 */

/** `a: &a [lol × 9]`, `b: &b [*a × 9]`, … `j`: a billion laughs if every alias were expanded. */
export function yamlAliasBomb(): string {
  let doc = 'name: bomb\nsystem_prompt: hi\nx:\n  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let prev = 'a';
  for (const n of 'bcdefghij') {
    doc += `  ${n}: &${n} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
    prev = n;
  }
  return doc;
}

/** 1,000,000 nested YAML flow sequences: the yaml parser needs ~12 s, so the import hits PARSE_TIMEOUT_MS. */
export function deepYaml(): string {
  return `x: ${'['.repeat(1_000_000)}`;
}

/** 100 lines of 10,000 `a`s: every line matches `^(a+)+$`, which backtracks exponentially in V8. */
export function redosFile(): string {
  return `${'a'.repeat(10_000)}\n`.repeat(100);
}
