/**
 * The parser of imported agent definitions (POST /v1/agents/import): caller-controlled text in
 * three formats, run in the parse pool (parse-jobs.ts), so it lives here and not in the agents
 * module, which reaches it through src/offthread/index.ts.
 */
import { parse as parseYaml } from 'yaml';
import { InvalidRequestError } from '../errors.js';
// The module alone, not src/http/index.ts: the parse worker thread must not load the HTTP server.
import { DEFAULT_MAX_JSON_DEPTH, isCleanString, scanJson } from '../http/input-hygiene.js';
import { yamlNestsDeeperThan } from './definition-hygiene.js';

/** Largest agent or harness body parsed: above the 1 MB prompt limit, so an oversize prompt is read and gets 400. */
export const AGENT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The three import formats of POST /v1/agents/import (spec 4.1). */
export type DefinitionFormat = 'markdown' | 'yaml' | 'json';

/** Display names used in error messages. */
export const FORMAT_NAMES: Record<DefinitionFormat, string> = { markdown: 'Markdown', yaml: 'YAML', json: 'JSON' };

/** YAML alias expansions allowed (the `yaml` default, stated): `&a [*b, *b]` chains grow exponentially. */
const MAX_YAML_ALIASES = 100;

/** `---` line, YAML, `---` line, then the system prompt (one blank line after the fence is skipped). */
const FRONT_MATTER_RE = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

const MEDIA_TYPES: Record<string, DefinitionFormat> = {
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'application/json': 'json',
  'text/json': 'json',
  'application/yaml': 'yaml',
  'application/x-yaml': 'yaml',
  'text/yaml': 'yaml',
  'text/x-yaml': 'yaml',
};

/** The format named by the Content-Type, else guessed from the text: `{` → JSON, front matter → Markdown, else YAML. */
export function detectFormat(contentType: string | undefined, text: string): DefinitionFormat {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const named = MEDIA_TYPES[media] ?? (media.endsWith('+json') ? 'json' : media.endsWith('+yaml') ? 'yaml' : undefined);
  if (named) return named;
  if (text.trimStart().startsWith('{')) return 'json';
  if (FRONT_MATTER_RE.test(text)) return 'markdown';
  return 'yaml';
}

/**
 * Parses an agent definition into a plain document (not yet validated). Malformed input
 * throws 400 naming the format that failed.
 */
export function parseDefinition(raw: Buffer, contentType: string | undefined): { format: DefinitionFormat; doc: Record<string, unknown> } {
  const text = raw.toString('utf8').replace(/^\uFEFF/, '');
  const format = detectFormat(contentType, text);
  const fail = (why: string) => new InvalidRequestError(`Invalid request: malformed ${FORMAT_NAMES[format]} agent definition: ${why}`);
  if (text.trim() === '') throw fail('the body is empty');
  let doc: unknown;
  if (format === 'json') {
    const problem = scanJson(raw, DEFAULT_MAX_JSON_DEPTH);
    if (problem === 'too_deep') throw fail(`it nests deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`);
    try {
      doc = JSON.parse(text);
    } catch {
      throw fail('not valid JSON');
    }
  } else if (format === 'yaml') {
    doc = yamlDocument(text, fail, 'not valid YAML');
  } else {
    doc = markdownDocument(text, fail);
  }
  if (!isPlainObject(doc)) throw fail('the document must be an object of agent fields');
  // Depth and size first: aliases can nest and grow a document beyond what its text shows.
  const problem = documentProblem(doc, DEFAULT_MAX_JSON_DEPTH, AGENT_MAX_BODY_BYTES);
  if (problem) throw fail(problem);
  return { format, doc };
}

function markdownDocument(text: string, fail: (why: string) => Error): Record<string, unknown> {
  const m = FRONT_MATTER_RE.exec(text);
  if (!m) throw fail('it must start with YAML front matter between two --- lines');
  const front = m[1] === undefined || m[1].trim() === '' ? {} : yamlDocument(m[1], fail, 'the front matter is not valid YAML');
  if (!isPlainObject(front)) throw fail('the front matter must be a mapping of agent fields');
  const body = text.slice(m[0].length).replace(/^\r?\n/, '');
  if ('system_prompt' in front) {
    if (body.trim() !== '') throw fail('give the system prompt either after the front matter or as system_prompt, not both');
    return front;
  }
  return { ...front, system_prompt: body };
}

function yamlDocument(text: string, fail: (why: string) => Error, why: string): unknown {
  if (yamlNestsDeeperThan(text, DEFAULT_MAX_JSON_DEPTH)) throw fail(`it nests deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`);
  try {
    return parseYaml(text, { prettyErrors: false, maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    if (err instanceof ReferenceError && /alias/i.test(err.message))
      throw fail(`${why}: too many alias expansions (at most ${MAX_YAML_ALIASES})`);
    const pos = (err as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    throw fail(pos ? `${why} (line ${pos.line}, column ${pos.col})` : why);
  }
}

/**
 * Why a parsed document is refused, or null: nested deeper than `maxDepth`, larger than
 * `maxUnits` once YAML aliases are expanded (strings count their length, other values 1), or,
 * when neither, a key or string with a NUL or an unpaired surrogate. One walk; it stops as soon
 * as a bound is passed, so it costs at most `maxUnits` steps.
 */
export function documentProblem(doc: unknown, maxDepth: number, maxUnits: number): string | null {
  const tooBig = `it expands to more than ${maxUnits} characters (YAML aliases count each time they are used)`;
  let units = 0;
  let unclean = false;
  const stack: [unknown, number][] = [[doc, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    units += typeof value === 'string' ? value.length + 1 : 1;
    if (units > maxUnits) return tooBig;
    if (typeof value === 'string') unclean ||= !isCleanString(value);
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) return `it nests deeper than ${maxDepth} levels (YAML aliases included)`;
    if (Array.isArray(value)) {
      if (units + value.length > maxUnits) return tooBig;
      for (const child of value) stack.push([child, depth + 1]);
      continue;
    }
    for (const key in value) {
      units += key.length;
      if (units > maxUnits) return tooBig;
      unclean ||= !isCleanString(key);
      stack.push([(value as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return unclean ? 'a string contains a NUL character or an unpaired surrogate' : null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
