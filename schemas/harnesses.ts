import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';
import { CapabilityItem } from './capabilities.js';

/** A `$ref` to a named schema that keeps the target's static type. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref(schema.$id!));

/** The built-in `generic` harness (src/api/harnesses/built-in.ts): sessions created from an agent alone run on it. */
export const GENERIC_HARNESS_ID = '00000000-0000-4000-8000-000000000001';

// Size limits are those of agents (spec 8), counted in UTF-8 bytes by the service.

export const HarnessStatus = Type.Union([Type.Literal('active'), Type.Literal('archived')], { $id: 'HarnessStatus' });

const MaxIterations = Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], {
  description: 'Maximum reason/act iterations per turn (default 100); an agent setting wins.',
});

const HarnessFields = {
  name: Type.String({ minLength: 1, description: 'At most 2 KB (UTF-8).' }),
  system_prompt: Type.String({ description: 'Base of the prompt stack, at most 1 MB (UTF-8).' }),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'At most 10 KB (UTF-8).' })),
  default_model_id: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'Lowest-priority model default; null removes it.' })),
  capabilities: Type.Optional(Type.Array(ref(CapabilityItem), { description: 'At most 250 items.' })),
  max_iterations: Type.Optional(MaxIterations),
};

/** POST /v1/harnesses (admin). */
export const HarnessCreate = Type.Object(HarnessFields, { $id: 'HarnessCreate', additionalProperties: false });

/** PATCH /v1/harnesses/{id} (admin): only the given fields change; `status` is never changed. */
export const HarnessPatch = Type.Object(
  {
    // Response-only fields a client may echo back; ignored.
    status: Type.Optional(ref(HarnessStatus)),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
    name: Type.Optional(HarnessFields.name),
    system_prompt: Type.Optional(HarnessFields.system_prompt),
    description: HarnessFields.description,
    default_model_id: HarnessFields.default_model_id,
    capabilities: HarnessFields.capabilities,
    max_iterations: HarnessFields.max_iterations,
  },
  { $id: 'HarnessPatch', additionalProperties: false },
);

export const Harness = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    system_prompt: Type.String(),
    capabilities: Type.Array(ref(CapabilityItem)),
    default_model_id: Type.Union([Uuid, Type.Null()]),
    max_iterations: Type.Union([Type.Integer(), Type.Null()]),
    is_built_in: Type.Boolean({ description: 'Built-in harnesses are shared by every organisation and read-only.' }),
    status: ref(HarnessStatus),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Harness', additionalProperties: false },
);

export const HarnessList = ListOf(ref(Harness), 'HarnessList');

export const HarnessListQuery = Type.Object({ include_archived: Type.Optional(Type.Boolean({ default: false })) });

export type HarnessCreateInput = Static<typeof HarnessCreate>;
export type HarnessPatchInput = Static<typeof HarnessPatch>;
export type HarnessView = Static<typeof Harness>;

export const harnessSchemas = [HarnessStatus, HarnessCreate, HarnessPatch, Harness, HarnessList];
