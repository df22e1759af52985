import type { Capability, JsonSchema } from './types.js';

export interface ToolView {
  name: string;
  display_name: string;
  description: string;
  parameters: JsonSchema;
}

/** The public JSON of a capability (GET /v1/capabilities). */
export interface CapabilityView {
  id: string;
  name: string;
  description: string;
  /** Always `available` for a registered capability (reference CapabilityInfo). */
  status: 'available';
  /** The instructions the capability prepends to the system prompt. */
  system_prompt: string;
  tools: ToolView[];
  /** The same list under the reference API's name. */
  tool_definitions: ToolView[];
  config_schema: JsonSchema;
  features: string[];
  dependencies: string[];
}

/** Plain JSON data only (no functions, no TypeBox symbols); safe to serialise and to mutate. */
export function capabilityView(cap: Capability): CapabilityView {
  const tools = () =>
    cap.tools.map((t) => ({ name: t.name, display_name: t.display_name, description: t.description, parameters: clone(t.parameters) }));
  return {
    id: cap.id,
    name: cap.name,
    description: cap.description,
    status: 'available',
    system_prompt: cap.prompt,
    tools: tools(),
    tool_definitions: tools(),
    config_schema: clone(cap.configSchema),
    features: [...cap.features],
    dependencies: [...cap.dependencies],
  };
}

function clone(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}
