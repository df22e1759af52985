import { ForbiddenError } from '../errors.js';
import type { Principal } from './principal.js';

/**
 * For SSE handlers: a stream token opens only the session it was minted for; any other session
 * is 403. Other principals pass (their org scope is checked by the data layer).
 */
export function assertStreamScope(principal: Principal, sessionId: string): void {
  if (principal.via === 'stream_token' && principal.stream_session_id?.toLowerCase() !== sessionId.toLowerCase()) {
    throw new ForbiddenError();
  }
}
