/**
 * Capability resolution (spec 3.4): harness, then agent, then session, merged without
 * duplicates, dependencies added. Pure: no I/O, no clock.
 */
import { UnprocessableError } from '../errors.js';
import type { CapabilityRegistry } from './registry.js';
import type { CapabilityConfig, CapabilityRef, Feature, ResolvedCapabilities, ResolvedCapabilityRef, ResolvedTool } from './types.js';

/** The capability items of each layer; absent layers count as empty. */
export interface CapabilityLayers {
  harness?: readonly CapabilityRef[];
  agent?: readonly CapabilityRef[];
  session?: readonly CapabilityRef[];
}

/** What resolution reads from the registry. */
export type CapabilityLookup = Pick<CapabilityRegistry, 'get'>;

/** `"id"` → `{ref: "id", config: {}}`; `{ref}` → `{ref, config: {}}`. */
export function normalizeCapabilityRef(item: CapabilityRef): ResolvedCapabilityRef {
  if (typeof item === 'string') return { ref: item, config: {} };
  return { ref: item.ref, config: item.config ?? {} };
}

/**
 * Merges the layers in order harness → agent → session. A capability keeps the position of its
 * first mention; configs for the same ref merge key by key, later items winning. Each
 * capability's dependencies are placed before it (transitively, cycles tolerated) with an empty
 * config unless listed explicitly. Refs the registry does not know are left out and reported
 * in `unknown` (items are validated on write; this keeps old records usable).
 */
export function resolveCapabilities(layers: CapabilityLayers, registry: CapabilityLookup): ResolvedCapabilities {
  const explicit = mergeLayers([layers.harness ?? [], layers.agent ?? [], layers.session ?? []]);
  const unknown = [...explicit.keys()].filter((ref) => !registry.get(ref));
  const order: string[] = [];
  const visit = (ref: string, seen: Set<string>) => {
    if (seen.has(ref) || !registry.get(ref)) return;
    seen.add(ref);
    for (const dep of registry.get(ref)!.dependencies) visit(dep, seen);
    order.push(ref);
  };
  const seen = new Set<string>();
  for (const ref of explicit.keys()) visit(ref, seen);

  const capabilities = order.map((ref) => ({ ref, config: explicit.get(ref) ?? {} }));
  return {
    capabilities,
    features: featuresOf(capabilities, registry),
    tools: toolsOf(capabilities, registry),
    prompt: promptOf(capabilities, registry),
    unknown,
  };
}

function mergeLayers(layers: ReadonlyArray<readonly CapabilityRef[]>): Map<string, CapabilityConfig> {
  const merged = new Map<string, CapabilityConfig>();
  for (const item of layers.flat()) {
    const { ref, config } = normalizeCapabilityRef(item);
    merged.set(ref, { ...(merged.get(ref) ?? {}), ...config });
  }
  return merged;
}

function featuresOf(capabilities: ResolvedCapabilityRef[], registry: CapabilityLookup): Feature[] {
  return [...new Set(capabilities.flatMap((c) => registry.get(c.ref)!.features))];
}

function toolsOf(capabilities: ResolvedCapabilityRef[], registry: CapabilityLookup): ResolvedTool[] {
  return capabilities.flatMap(({ ref, config }) =>
    registry.get(ref)!.tools.map((tool): ResolvedTool => ({ ...tool, capability_id: ref, config })),
  );
}

function promptOf(capabilities: ResolvedCapabilityRef[], registry: CapabilityLookup): string {
  return capabilities
    .map((c) => registry.get(c.ref)!)
    .filter((cap) => cap.prompt.trim() !== '')
    .map((cap) => `## ${cap.name}\n${cap.prompt.trim()}`)
    .join('\n\n');
}

/** The runtime system prompt: capability instructions first, then the agent's base prompt. */
export function buildSystemPrompt(base: string, resolved: Pick<ResolvedCapabilities, 'prompt'>): string {
  return [resolved.prompt.trim(), base].filter((part) => part.trim() !== '').join('\n\n');
}

/**
 * Checks capability items as sent on a write (agent, harness, session): each is a non-empty id
 * or `{ref, config?}` with an object (or null) config; the ref is known and the config matches its schema.
 * Throws `UnprocessableError` (422) naming the first bad item.
 */
export function validateCapabilityRefs(
  items: unknown,
  registry: Pick<CapabilityRegistry, 'has' | 'validateConfig'>,
): asserts items is CapabilityRef[] {
  if (!Array.isArray(items)) throw new UnprocessableError('capabilities must be an array');
  items.forEach((item: unknown, index) => {
    const { ref, config } = refShape(item, index);
    if (!registry.has(ref)) throw new UnprocessableError(`Unknown capability: ${ref}`);
    const errors = registry.validateConfig(ref, config ?? {});
    if (errors) throw new UnprocessableError(`Invalid config for capability ${ref}: ${errors.join('; ')}`);
  });
}

function refShape(item: unknown, index: number): { ref: string; config: unknown } {
  if (typeof item === 'string' && item !== '') return { ref: item, config: undefined };
  const bad = () => new UnprocessableError(`capabilities[${index}] must be a capability id or {ref, config?}`);
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw bad();
  const { ref, config, ...rest } = item as Record<string, unknown>;
  if (typeof ref !== 'string' || ref === '' || Object.keys(rest).length > 0) throw bad();
  if (config === undefined || config === null) return { ref, config: undefined };
  if (typeof config !== 'object' || Array.isArray(config)) throw new UnprocessableError(`capabilities[${index}].config must be an object`);
  return { ref, config };
}
