import { LimitExceededError } from '../../errors.js';
import { AGENT_MAX_BODY_BYTES } from '../../offthread/index.js';

/** Spec 8, in UTF-8 bytes (name, description, system prompt) and items (capabilities). */
export const AGENT_LIMITS = {
  nameBytes: 2048,
  descriptionBytes: 10240,
  systemPromptBytes: 1048576,
  capabilities: 250,
} as const;

export { AGENT_MAX_BODY_BYTES };
/**
 * The transport limit of agent and harness write routes. A body between AGENT_MAX_BODY_BYTES and
 * this gets 400 'Input exceeds allowed limits' (spec 8) without being parsed; only a larger one
 * gets 413.
 */
export const AGENT_TRANSPORT_MAX_BYTES = 8 * 1024 * 1024;
/** The body limits of agent and harness write routes (RouteInfo). */
export const AGENT_BODY_LIMITS = { maxBodyBytes: AGENT_TRANSPORT_MAX_BYTES, limitBodyBytes: AGENT_MAX_BODY_BYTES } as const;

/** The size-limited fields of an agent or harness write; absent fields and other types are not checked. */
export interface LimitedFields {
  name?: unknown;
  description?: unknown;
  system_prompt?: unknown;
  capabilities?: unknown;
}

/** Throws 400 'Input exceeds allowed limits' when any given field is over its limit (spec 8). */
export function checkAgentLimits(fields: LimitedFields): void {
  const over =
    tooLong(fields.name, AGENT_LIMITS.nameBytes) ||
    tooLong(fields.description, AGENT_LIMITS.descriptionBytes) ||
    tooLong(fields.system_prompt, AGENT_LIMITS.systemPromptBytes) ||
    (Array.isArray(fields.capabilities) && fields.capabilities.length > AGENT_LIMITS.capabilities);
  if (over) throw new LimitExceededError();
}

function tooLong(value: unknown, maxBytes: number): boolean {
  // A UTF-16 string of n code units encodes to at most 3n bytes: skip the count when that fits.
  return typeof value === 'string' && value.length * 3 > maxBytes && Buffer.byteLength(value, 'utf8') > maxBytes;
}
