import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { capabilityView } from '../../src/capabilities/capability-view.js';
import { createCapabilityRegistry } from '../../src/capabilities/registry.js';

describe('capabilityView', () => {
  it('renders the public JSON of a capability', () => {
    const view = capabilityView(createCapabilityRegistry().get('web_fetch')!);
    assert.equal(view.id, 'web_fetch');
    assert.equal(view.name, 'Web Fetch');
    assert.equal(view.status, 'available');
    assert.match(view.system_prompt, /fetch_url/);
    assert.deepEqual(view.features, []);
    assert.deepEqual(view.dependencies, []);
    assert.deepEqual(
      view.tools.map((t) => t.name),
      ['fetch_url'],
    );
    assert.deepEqual(view.tool_definitions, view.tools);
    const params = view.tools[0]!.parameters as { type: string; required: string[]; properties: Record<string, unknown> };
    assert.equal(params.type, 'object');
    assert.deepEqual(params.required, ['url']);
    const config = view.config_schema as { properties: Record<string, unknown> };
    assert.ok('timeout_ms' in config.properties && 'allow_hosts' in config.properties && 'max_bytes' in config.properties);
  });

  it('is plain, detached JSON (no symbols, no functions, mutations do not leak)', () => {
    const registry = createCapabilityRegistry();
    for (const cap of registry.list()) {
      const view = capabilityView(cap);
      assert.deepEqual(JSON.parse(JSON.stringify(view)), view);
      assert.equal(Object.getOwnPropertySymbols(view.tools[0]?.parameters ?? {}).length, 0);
    }
    const view = capabilityView(registry.get('session_schedule')!);
    (view.config_schema as Record<string, unknown>)['x'] = 1;
    view.dependencies.push('y');
    assert.equal(capabilityView(registry.get('session_schedule')!).dependencies.length, 1);
    assert.equal((registry.get('session_schedule')!.configSchema as Record<string, unknown>)['x'], undefined);
  });
});
