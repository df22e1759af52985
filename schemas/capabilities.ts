import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CapabilityRef, PageOf } from './common.js';

/** A `$ref` to a named schema that keeps the target's static type. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref(schema.$id!));

/** A JSON object whose keys are not fixed (capability config, JSON Schema documents). */
export const JsonObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

/** A capability item on an agent or harness: an id, or `{ref, config?}` (spec 2.1). Kept as sent. */
export const CapabilityItem = Type.Union([Type.String({ minLength: 1, maxLength: 128 }), ref(CapabilityRef)], {
  $id: 'CapabilityItem',
  description: 'A capability id, or `{ref, config?}` with capability-specific config.',
});

/** A tool as offered to the LLM (preview, capability listings). */
export const ToolSpec = Type.Object({ name: Type.String(), description: Type.String(), parameters: JsonObject }, { $id: 'ToolSpec' });

/** A tool a capability contributes. */
export const CapabilityTool = Type.Object(
  { name: Type.String(), display_name: Type.String(), description: Type.String(), parameters: JsonObject },
  { $id: 'CapabilityTool' },
);

/** One entry of the capability registry (GET /v1/capabilities). */
export const CapabilityInfo = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    status: Type.Literal('available', { description: 'Every registered capability is `available`.' }),
    system_prompt: Type.String({ description: 'Instructions prepended to the system prompt while the capability is active.' }),
    tools: Type.Array(ref(CapabilityTool)),
    tool_definitions: Type.Array(ref(CapabilityTool), { description: 'The same list under the reference API name.' }),
    config_schema: JsonObject,
    features: Type.Array(Type.String()),
    dependencies: Type.Array(Type.String()),
  },
  { $id: 'CapabilityInfo' },
);

export const CapabilityList = PageOf(ref(CapabilityInfo), 'CapabilityList');

/** The reference API's paging of the registry; the default page holds the whole registry of today. */
export const CapabilityListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 256, description: 'Case-insensitive substring of the id, name or description.' })),
  offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
});

export const CapabilityIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export type CapabilityItemInput = Static<typeof CapabilityItem>;
export type CapabilityInfoView = Static<typeof CapabilityInfo>;

export const capabilitySchemas = [CapabilityItem, ToolSpec, CapabilityTool, CapabilityInfo, CapabilityList];
