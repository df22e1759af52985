import type { ClientToolInput } from '../../../schemas/agents.js';
import { InvalidRequestError } from '../../errors.js';
import { firstNonCompilingSchema } from '../../offthread/index.js';

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
