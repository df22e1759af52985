import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';

/** A `$ref` to a named schema that keeps the target's static type. */
const ref = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref(schema.$id!));

// LLM providers and models (spec 2.6, 4.4). Field names follow the reference API where the
// spec is silent (llm-providers / llm-models).

export const LlmProviderType = Type.Union(
  [Type.Literal('openai'), Type.Literal('openai_completions'), Type.Literal('anthropic'), Type.Literal('gemini'), Type.Literal('llmsim')],
  {
    $id: 'LlmProviderType',
    description:
      '`openai` (Responses API), `openai_completions` (Chat Completions, any OpenAI-compatible server with `base_url`), `anthropic` (Messages API), `gemini`, `llmsim` (built-in simulator).',
  },
);

const ApiKey = Type.String({ minLength: 1, maxLength: 4096, description: 'Write-only; encrypted at rest and never returned.' });
const BaseUrl = Type.Union([Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048 }), Type.Null()], {
  description:
    'Custom SDK base URL (OpenAI-style URLs include `/v1`); null = the vendor default. Providers with a custom base URL cannot sync models.',
});
const ProviderName = Type.String({ minLength: 1, maxLength: 256 });

/** POST /v1/llm-providers. */
export const LlmProviderCreate = Type.Object(
  { name: ProviderName, provider_type: ref(LlmProviderType), api_key: ApiKey, base_url: Type.Optional(BaseUrl) },
  { $id: 'LlmProviderCreate', additionalProperties: false },
);

/**
 * PATCH /v1/llm-providers/{id}: only the given fields change; `api_key` replaces the key. A new
 * `base_url` or `provider_type` needs a new `api_key` in the same request.
 */
export const LlmProviderPatch = Type.Object(
  {
    name: Type.Optional(ProviderName),
    provider_type: Type.Optional(ref(LlmProviderType)),
    api_key: Type.Optional(ApiKey),
    base_url: Type.Optional(BaseUrl),
  },
  { $id: 'LlmProviderPatch', additionalProperties: false },
);

export const LlmProvider = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    provider_type: ref(LlmProviderType),
    base_url: Type.Union([Type.String(), Type.Null()]),
    api_key_set: Type.Boolean({ description: 'Whether a key is stored (it is never returned).' }),
    last_synced_at: Type.Union([Timestamp, Type.Null()], { description: 'When models were last synced from the vendor.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'LlmProvider', additionalProperties: false },
);

export const LlmProviderList = ListOf(ref(LlmProvider), 'LlmProviderList');

export const LlmModelSource = Type.Union([Type.Literal('manual'), Type.Literal('discovered')], {
  $id: 'LlmModelSource',
  description: '`manual`: added through the API; `discovered`: found by sync-models.',
});

export const LlmModelStatus = Type.Union([Type.Literal('active'), Type.Literal('stale')], {
  $id: 'LlmModelStatus',
  description: '`stale`: a discovered model the vendor no longer lists (kept, still usable).',
});

const Capabilities = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 32,
  description: 'E.g. `chat`, `vision`, `tools`.',
});
const DisplayName = Type.String({ minLength: 1, maxLength: 256 });
const ContextWindow = Type.Integer({
  minimum: 256,
  maximum: 100_000_000,
  description: 'Tokens one request to the model may hold (compaction keeps the history under it).',
});
const MaxOutputTokens = Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'Most tokens the model generates per call.' });

/** POST /v1/llm-providers/{id}/models: a manual model. */
export const LlmModelCreate = Type.Object(
  {
    model_id: Type.String({ minLength: 1, maxLength: 256, description: "The vendor's model name sent on the wire (e.g. `gpt-5`)." }),
    display_name: Type.Optional(DisplayName),
    capabilities: Type.Optional(Capabilities),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    context_window: Type.Optional(ContextWindow),
    max_output_tokens: Type.Optional(MaxOutputTokens),
  },
  { $id: 'LlmModelCreate', additionalProperties: false },
);

/** PATCH /v1/llm-models/{id}. */
export const LlmModelPatch = Type.Object(
  {
    display_name: Type.Optional(DisplayName),
    capabilities: Type.Optional(Capabilities),
    enabled: Type.Optional(Type.Boolean()),
    context_window: Type.Optional(Type.Union([ContextWindow, Type.Null()], { description: 'null: back to the family default.' })),
    max_output_tokens: Type.Optional(Type.Union([MaxOutputTokens, Type.Null()], { description: 'null: back to the family default.' })),
  },
  { $id: 'LlmModelPatch', additionalProperties: false },
);

export const LlmModel = Type.Object(
  {
    id: Uuid,
    provider_id: Uuid,
    provider_name: Type.String(),
    provider_type: ref(LlmProviderType),
    model_id: Type.String(),
    display_name: Type.String(),
    capabilities: Type.Array(Type.String()),
    enabled: Type.Boolean({ description: 'Shown in model pickers; every model stays usable through the API.' }),
    context_window: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "Tokens one request may hold: the record's own value (set, or listed by the vendor at sync), else the known family's; null: unknown.",
    }),
    max_output_tokens: Type.Union([Type.Integer(), Type.Null()], {
      description: "Most tokens one call generates: the record's own value, else the known family's; null: unknown.",
    }),
    source: ref(LlmModelSource),
    status: ref(LlmModelStatus),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'LlmModel', additionalProperties: false },
);

export const LlmModelList = ListOf(ref(LlmModel), 'LlmModelList');

export const LlmModelListQuery = Type.Object(
  {
    provider_id: Type.Optional(Uuid),
    source: Type.Optional(ref(LlmModelSource)),
    status: Type.Optional(ref(LlmModelStatus)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const SyncModelsResult = Type.Union(
  [
    Type.Object(
      {
        status: Type.Literal('success'),
        created: Type.Integer({ minimum: 0, description: 'New models discovered.' }),
        updated: Type.Integer({ minimum: 0, description: 'Known models whose name or status changed.' }),
        stale: Type.Integer({ minimum: 0, description: 'Discovered models marked stale (no longer listed).' }),
      },
      { additionalProperties: false },
    ),
    Type.Object({ status: Type.Literal('not_supported') }, { additionalProperties: false }),
  ],
  { $id: 'SyncModelsResult' },
);

/** GET/PUT /v1/llm-models/default: the organisation's default model. */
export const DefaultModel = Type.Object(
  {
    model_id: Type.Union([Uuid, Type.Null()], { description: "The organisation's default model; null when unset." }),
    model: Type.Union([ref(LlmModel), Type.Null()]),
    system_default: Type.Union([Type.Literal('llmsim'), Type.Null()], {
      description:
        'What a turn uses when no model is set anywhere and the organisation has no default: `llmsim` (the built-in simulator); null when the service has no system default (such a turn fails with llm_error).',
    }),
  },
  { $id: 'DefaultModel', additionalProperties: false },
);

export const DefaultModelPut = Type.Object(
  { model_id: Type.Union([Uuid, Type.Null()], { description: 'A model of the organisation; null clears the default.' }) },
  { $id: 'DefaultModelPut', additionalProperties: false },
);

export type LlmProviderTypeValue = Static<typeof LlmProviderType>;
export type LlmProviderCreateInput = Static<typeof LlmProviderCreate>;
export type LlmProviderPatchInput = Static<typeof LlmProviderPatch>;
export type LlmProviderView = Static<typeof LlmProvider>;
export type LlmModelSourceValue = Static<typeof LlmModelSource>;
export type LlmModelStatusValue = Static<typeof LlmModelStatus>;
export type LlmModelCreateInput = Static<typeof LlmModelCreate>;
export type LlmModelPatchInput = Static<typeof LlmModelPatch>;
export type LlmModelView = Static<typeof LlmModel>;
export type LlmModelListQueryInput = Static<typeof LlmModelListQuery>;
export type SyncModelsResultView = Static<typeof SyncModelsResult>;
export type DefaultModelView = Static<typeof DefaultModel>;

export const llmSchemas = [
  LlmProviderType,
  LlmProviderCreate,
  LlmProviderPatch,
  LlmProvider,
  LlmProviderList,
  LlmModelSource,
  LlmModelStatus,
  LlmModelCreate,
  LlmModelPatch,
  LlmModel,
  LlmModelList,
  SyncModelsResult,
  DefaultModel,
  DefaultModelPut,
];
