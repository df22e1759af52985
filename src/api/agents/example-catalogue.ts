import { readdirSync, readFileSync } from 'node:fs';
import { PACKAGE_ROOT } from '../../package-root.js';
import { parseDefinition } from '../../offthread/index.js';

/** `examples/agents/` at the repository root (also copied into the image). */
const EXAMPLES_DIR = new URL('examples/agents/', PACKAGE_ROOT);

/** One shipped example agent: `POST /v1/agents/import?from-example=<name>` imports `definition`. */
export interface ExampleAgent {
  /** The file name without `.md`, e.g. `dad-jokes-agent`. */
  name: string;
  agent_name: string;
  description: string;
  tags: string[];
  definition: Buffer;
}

export type ExampleCatalogue = ReadonlyMap<string, ExampleAgent>;

/**
 * Reads the Markdown definitions of `dir` once, at startup. A file that does not parse throws
 * here, so a broken example fails the start instead of one user's import. Lookups go through
 * the map, so a name can only ever be one of the files listed.
 */
export function loadExampleCatalogue(dir: URL = EXAMPLES_DIR): ExampleCatalogue {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .sort();
  } catch {
    return new Map();
  }
  return new Map(
    files.map((file) => {
      const definition = readFileSync(new URL(file, dir));
      const { doc } = parseDefinition(definition, 'text/markdown');
      const name = file.slice(0, -'.md'.length);
      const tags = Array.isArray(doc['tags']) ? doc['tags'].map(String) : [];
      return [name, { name, agent_name: String(doc['name'] ?? name), description: String(doc['description'] ?? ''), tags, definition }];
    }),
  );
}
