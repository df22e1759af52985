import type { ErrorObject, ValidateFunction } from 'ajv';
import { addFormatOnce, ajv } from '../validation/index.js';
import { builtinCapabilities, type BuiltinCapabilityOptions } from './builtin.js';
import { isValidTimeZone } from './time-zone.js';
import type { Capability, CapabilityConfig } from './types.js';

export interface CapabilityRegistryOptions {
  /** The capabilities to serve (default: the seven built-ins). */
  capabilities?: Capability[];
  /** Operator settings of the built-ins (ignored when `capabilities` is given). */
  builtin?: BuiltinCapabilityOptions;
}

/**
 * The set of known capabilities, checked and compiled once: ids and tool names are unique,
 * dependencies exist, tool parameters are object schemas, config schemas compile (ajv strict).
 * Throws at construction when any of that fails.
 */
export function createCapabilityRegistry(opts: CapabilityRegistryOptions = {}) {
  const capabilities = [...(opts.capabilities ?? builtinCapabilities(opts.builtin))];
  const byId = new Map(capabilities.map((c) => [c.id, c]));
  checkIntegrity(capabilities, byId);
  addFormatOnce('iana-timezone', isValidTimeZone);
  const validators = new Map<string, ValidateFunction>(capabilities.map((c) => [c.id, ajv.compile(c.configSchema)]));

  return {
    /** All capabilities in registration order. */
    list(): Capability[] {
      return [...capabilities];
    },
    get(id: string): Capability | undefined {
      return byId.get(id);
    },
    has(id: string): boolean {
      return byId.has(id);
    },
    /** Null when `config` is valid for the capability, else readable messages. */
    validateConfig(id: string, config: unknown): string[] | null {
      const validate = validators.get(id);
      if (!validate) return [`Unknown capability: ${id}`];
      if (!validate(config)) return [...new Set((validate.errors ?? []).map(describeConfigError))];
      return byId.get(id)?.checkConfig?.(config as CapabilityConfig) ?? null;
    },
  };
}

export type CapabilityRegistry = ReturnType<typeof createCapabilityRegistry>;

function checkIntegrity(capabilities: Capability[], byId: Map<string, Capability>): void {
  if (byId.size !== capabilities.length) throw new Error('Capability ids must be unique');
  const toolOwners = new Map<string, string>();
  for (const cap of capabilities) {
    for (const dep of cap.dependencies) {
      if (!byId.has(dep)) throw new Error(`Capability ${cap.id} depends on unknown capability ${dep}`);
    }
    for (const tool of cap.tools) {
      const owner = toolOwners.get(tool.name);
      if (owner) throw new Error(`Tool ${tool.name} is defined by both ${owner} and ${cap.id}`);
      if (tool.parameters['type'] !== 'object') throw new Error(`Tool ${tool.name}: parameters must be a type:object schema`);
      toolOwners.set(tool.name, cap.id);
    }
  }
}

/** e.g. `timeout_ms must be <= 300000`, `foo is not a known setting`. */
function describeConfigError(e: ErrorObject): string {
  const at = e.instancePath.slice(1).replaceAll('/', '.');
  if (e.keyword === 'additionalProperties') {
    return `${at ? `${at}.` : ''}${String(e.params['additionalProperty'])} is not a known setting`;
  }
  if (e.keyword === 'format' && e.params['format'] === 'iana-timezone') return `${at} must be an IANA time zone`;
  return `${at || 'config'} ${e.message ?? 'is invalid'}`;
}
