import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callAddress } from '../../../src/api/mcp-server/call-cancel.js';
import type { Principal } from '../../../src/auth/index.js';
import { isAnyUuid } from '../../../src/ids.js';

/**
 * The control address of a running /v1/mcp call (decision 0094, "MCP cancellation"): a UUID
 * (signal addresses become NATS subject tokens), version 8 so it never equals a session's id,
 * the same for the same caller, MCP session and request on any instance, and different when
 * any of them differs (two clients of one user both number their requests from 0).
 */
describe('mcp-server call address', () => {
  const alice: Principal = { org_id: 'org-1', user_id: 'user-1', role: 'member', operator: false, via: 'api_key' };
  const base = callAddress({ principal: alice, mcpSessionId: 's-1' }, 0);

  it('is a version 8 UUID, stable for the same request', () => {
    assert.ok(isAnyUuid(base), base);
    assert.equal(base[14], '8');
    assert.equal(callAddress({ principal: { ...alice, via: 'access_token' }, mcpSessionId: 's-1' }, 0), base);
  });

  it('differs by MCP session, request id (also its type), user and organisation', () => {
    const others = [
      callAddress({ principal: alice, mcpSessionId: 's-2' }, 0),
      callAddress({ principal: alice, mcpSessionId: 's-1' }, 1),
      callAddress({ principal: alice, mcpSessionId: 's-1' }, '0'),
      callAddress({ principal: { ...alice, user_id: 'user-2' }, mcpSessionId: 's-1' }, 0),
      callAddress({ principal: { ...alice, org_id: 'org-2' }, mcpSessionId: 's-1' }, 0),
    ];
    assert.equal(new Set([base, ...others]).size, others.length + 1);
  });
});
