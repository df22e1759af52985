export { withAccumulatedDeltas } from './accumulating-log.js';
export { createConnectionLimits } from './connection-limits.js';
export type { ConnectionLimits } from './connection-limits.js';
export { eventFilter, passesFilter } from './event-filter.js';
export { deriveMessages } from './messages.js';
export { createSessionHub } from './session-hub.js';
export type { SessionHub } from './session-hub.js';
