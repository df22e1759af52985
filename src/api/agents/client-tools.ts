import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { ClientToolInput } from '../../../schemas/agents.js';
import { InvalidRequestError } from '../../errors.js';

// ajv-formats is CommonJS; under NodeNext its plugin is the `.default` of the module object.
const addFormats = ajvFormats.default;

/**
 * Checks client tools (spec 2.2): each `parameters` compiles as a JSON Schema (ajv, unknown
 * keywords tolerated as LLM vendors add their own) with top-level `type: "object"`; names are
 * unique and not taken by a capability tool. Throws 400 naming the first bad tool.
 * Returns the tools with `type: "client"` filled in.
 */
export function createClientToolChecker() {
  const ajv = new Ajv({ strict: false, logger: false, addUsedSchema: false, validateSchema: true });
  addFormats(ajv);

  function compiles(schema: Record<string, unknown>): boolean {
    try {
      ajv.compile(schema);
      return true;
    } catch {
      return false;
    } finally {
      ajv.removeSchema(schema);
    }
  }

  return function checkClientTools(tools: readonly ClientToolInput[], capabilityToolNames: ReadonlySet<string>): ClientToolInput[] {
    const seen = new Set<string>();
    for (const tool of tools) {
      const where = `Invalid request: client tool ${tool.name}`;
      if (tool.parameters['type'] !== 'object') throw new InvalidRequestError(`${where}: parameters must be a JSON Schema with type "object"`);
      if (!compiles(tool.parameters)) throw new InvalidRequestError(`${where}: parameters is not a valid JSON Schema`);
      if (seen.has(tool.name)) throw new InvalidRequestError(`${where}: tool names must be unique`);
      if (capabilityToolNames.has(tool.name)) throw new InvalidRequestError(`${where}: the name is taken by a capability tool`);
      seen.add(tool.name);
    }
    return tools.map((t) => ({ type: 'client', name: t.name, description: t.description, parameters: t.parameters }));
  };
}

export type ClientToolChecker = ReturnType<typeof createClientToolChecker>;
