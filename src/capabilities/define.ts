/**
 * Builders for capabilities and tools: a tool declares its parameters as a TypeBox schema
 * (plain JSON Schema at runtime), gets typed arguments, and has them validated before it runs.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Type, type Static, type TObject, type TUnsafe } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import { ajv, resolveRef } from '../validation/index.js';
import { applyDefaults } from '../validation/index.js';
import {
  ToolError,
  type Capability,
  type ContentPart,
  type JsonSchema,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from './types.js';

export interface ToolSpec<S extends TObject> {
  name: string;
  display_name: string;
  description: string;
  parameters: S;
  run(args: Static<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** Builds a `ToolDefinition` whose `execute` validates arguments (defaults applied) and maps storage errors. */
export function defineTool<S extends TObject>(spec: ToolSpec<S>): ToolDefinition {
  let validate: ValidateFunction | undefined;
  const parameters = toPlainSchema(spec.parameters);
  return {
    name: spec.name,
    display_name: spec.display_name,
    description: spec.description,
    parameters,
    async execute(args: unknown, ctx: ToolContext): Promise<ToolResult> {
      // Compiled on first use: most tools of a process are never called.
      validate ??= ajv.compile(spec.parameters);
      const copy: unknown = applyDefaults(spec.parameters, args === undefined || args === null ? {} : structuredClone(args), resolveRef);
      if (!validate(copy)) throw new ToolError(describeArgsErrors(validate.errors ?? []));
      try {
        return await spec.run(copy as Static<S>, ctx);
      } catch (err) {
        throw toToolError(err);
      }
    },
  };
}

export interface CapabilitySpec {
  id: string;
  name: string;
  description: string;
  prompt: string;
  tools: ToolDefinition[];
  configSchema: TObject;
  features?: Capability['features'];
  dependencies?: string[];
}

/** Builds a `Capability`; display names come from the tools. */
export function defineCapability(spec: CapabilitySpec): Capability {
  const displayNames = Object.fromEntries(spec.tools.map((t) => [t.name, t.display_name]));
  return {
    id: spec.id,
    name: spec.name,
    description: spec.description,
    prompt: spec.prompt,
    tools: spec.tools,
    configSchema: toPlainSchema(spec.configSchema),
    features: spec.features ?? [],
    dependencies: spec.dependencies ?? [],
    displayNames,
  };
}

/** A deep copy with only JSON data (TypeBox's symbol keys dropped). */
export function toPlainSchema(schema: object): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** A string enum as `{type: 'string', enum}` (the form every LLM provider accepts). */
export function StringEnum<const T extends readonly string[]>(values: T, opts: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...opts, type: 'string', enum: [...values] });
}

/** A result with one text part. */
export function textResult(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

/** A result with the value as pretty JSON text, plus optional further parts. */
export function jsonResult(value: unknown, ...more: ContentPart[]): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }, ...more] };
}

/** ToolErrors pass; 4xx AppErrors (storage contract) become ToolErrors; anything else passes unchanged. */
export function toToolError(err: unknown): unknown {
  if (err instanceof AppError && err.status >= 400 && err.status < 500) {
    return new ToolError(err.message, { cause: err });
  }
  return err;
}

/** e.g. `Invalid arguments: "path" is required` (the shared ajv stops at the first error). */
export function describeArgsErrors(errors: ErrorObject[]): string {
  const parts = errors.slice(0, 3).map(describeOne);
  return `Invalid arguments: ${[...new Set(parts)].join('; ')}`;
}

function describeOne(e: ErrorObject): string {
  const at = e.instancePath ? `"${e.instancePath.slice(1).replaceAll('/', '.')}"` : 'arguments';
  if (e.keyword === 'required') return `"${fieldPath(e.instancePath, e.params['missingProperty'])}" is required`;
  if (e.keyword === 'additionalProperties') {
    return `"${fieldPath(e.instancePath, e.params['additionalProperty'])}" is not a known parameter`;
  }
  if (e.keyword === 'enum') return `${at} must be one of ${JSON.stringify(e.params['allowedValues'])}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

function fieldPath(instancePath: string, name: unknown): string {
  const base = instancePath.slice(1).replaceAll('/', '.');
  return base ? `${base}.${String(name)}` : String(name);
}
