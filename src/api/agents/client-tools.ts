import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { ClientToolInput } from '../../../schemas/agents.js';
import { InvalidRequestError } from '../../errors.js';

// ajv-formats is CommonJS; under NodeNext its plugin is the `.default` of the module object.
const addFormats = ajvFormats.default;

/**
 * Index of the first schema that does not compile (ajv, unknown keywords tolerated as LLM
 * vendors add their own), or -1. Compiling is super-linear in the schema (2,000 properties
 * took 3 s, a 20,000-value enum half a second): the service runs this in the parse pool.
 * A fresh ajv per call, not the shared one (src/validation/ajv.ts): a tenant's schema must not
 * land in the shared instance's caches and `$id` registry (a tenant `$id` could shadow or clash
 * with ours, and what it compiles would stay in memory for good), its lax options (unknown
 * keywords allowed) must not loosen ours, and its compile time must not be spent there.
 */
export function firstNonCompilingSchema(schemas: readonly Record<string, unknown>[]): number {
  const ajv = new Ajv({ strict: false, logger: false, addUsedSchema: false, validateSchema: true });
  addFormats(ajv);
  return schemas.findIndex((schema) => {
    try {
      ajv.compile(schema);
      return false;
    } catch {
      return true;
    }
  });
}

export interface ClientToolCheckerOptions {
  /** Runs `firstNonCompilingSchema` (default: on the calling thread). */
  firstInvalid?: (schemas: Record<string, unknown>[]) => Promise<number>;
}

/**
 * Checks client tools (spec 2.2): each `parameters` compiles as a JSON Schema with top-level
 * `type: "object"`; names are unique and not taken by a capability tool. Throws 400 naming the
 * first bad tool. Returns the tools with `type: "client"` filled in. The schemas are only
 * checked, never used to validate anything on the server.
 */
export function createClientToolChecker({ firstInvalid = async (s) => firstNonCompilingSchema(s) }: ClientToolCheckerOptions = {}) {
  return async function checkClientTools(
    tools: readonly ClientToolInput[],
    capabilityToolNames: ReadonlySet<string>,
  ): Promise<ClientToolInput[]> {
    const where = (tool: ClientToolInput) => `Invalid request: client tool ${tool.name}`;
    for (const tool of tools) {
      if (tool.parameters['type'] !== 'object')
        throw new InvalidRequestError(`${where(tool)}: parameters must be a JSON Schema with type "object"`);
    }
    const bad = tools.length ? await firstInvalid(tools.map((t) => t.parameters)) : -1;
    if (bad >= 0) throw new InvalidRequestError(`${where(tools[bad]!)}: parameters is not a valid JSON Schema`);
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.name)) throw new InvalidRequestError(`${where(tool)}: tool names must be unique`);
      if (capabilityToolNames.has(tool.name)) throw new InvalidRequestError(`${where(tool)}: the name is taken by a capability tool`);
      seen.add(tool.name);
    }
    return tools.map((t) => ({ type: 'client', name: t.name, description: t.description, parameters: t.parameters }));
  };
}

export type ClientToolChecker = ReturnType<typeof createClientToolChecker>;
