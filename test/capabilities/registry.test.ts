import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { BUILTIN_CAPABILITY_IDS } from '../../src/capabilities/builtin.js';
import { defineCapability, defineTool, textResult } from '../../src/capabilities/define.js';
import { createCapabilityRegistry } from '../../src/capabilities/registry.js';

const tool = (name: string) =>
  defineTool({ name, display_name: name, description: name, parameters: Type.Object({}), run: async () => textResult('ok') });
const cap = (id: string, extra: Partial<Parameters<typeof defineCapability>[0]> = {}) =>
  defineCapability({ id, name: id, description: id, prompt: '', tools: [], configSchema: Type.Object({}), ...extra });

describe('capability registry', () => {
  it('registers the seven built-in capabilities in order', () => {
    const registry = createCapabilityRegistry();
    assert.deepEqual(
      registry.list().map((c) => c.id),
      [...BUILTIN_CAPABILITY_IDS],
    );
    for (const id of BUILTIN_CAPABILITY_IDS) assert.equal(registry.has(id), true);
    assert.equal(registry.has('nope'), false);
    assert.equal(registry.get('nope'), undefined);
  });

  it('built-ins carry the spec tool names, features and display names', () => {
    const registry = createCapabilityRegistry();
    const tools = (id: string) => registry.get(id)!.tools.map((t) => t.name);
    assert.deepEqual(tools('current_time'), ['get_current_time']);
    assert.deepEqual(tools('web_fetch'), ['fetch_url']);
    assert.deepEqual(tools('session_file_system'), [
      'read_file',
      'write_file',
      'edit_file',
      'list_directory',
      'grep_files',
      'delete_file',
      'stat_file',
      'move_file',
      'copy_file',
    ]);
    assert.deepEqual(tools('stateless_todo_list'), ['write_todos']);
    assert.deepEqual(tools('session_storage'), ['kv_store', 'secret_store']);
    assert.deepEqual(tools('session_schedule'), ['create_schedule', 'cancel_schedule', 'list_schedules']);
    assert.deepEqual(tools('session_sql_database'), ['sql_execute', 'sql_query', 'sql_schema']);
    assert.deepEqual(registry.get('session_storage')!.features, ['key_value', 'secrets']);
    assert.deepEqual(registry.get('session_file_system')!.features, ['file_system']);
    assert.deepEqual(registry.get('session_schedule')!.features, ['schedules']);
    assert.deepEqual(registry.get('session_sql_database')!.features, ['sql_database']);
    assert.equal(registry.get('current_time')!.displayNames['get_current_time'], 'Get Current Time');
    for (const c of registry.list()) {
      assert.ok(c.prompt.length > 20, `${c.id} has a prompt`);
      for (const t of c.tools) {
        assert.equal(t.parameters['type'], 'object', `${t.name} parameters are an object schema`);
        assert.ok(t.description.length > 10 && t.display_name.length > 0);
      }
    }
  });

  it('validateConfig accepts the spec config keys', () => {
    const registry = createCapabilityRegistry();
    assert.equal(registry.validateConfig('web_fetch', { timeout_ms: 5000 }), null);
    assert.equal(registry.validateConfig('web_fetch', { allow_hosts: ['example.com', '*.example.org'], max_bytes: 1000 }), null);
    assert.equal(registry.validateConfig('session_file_system', { max_file_size_mb: 5 }), null);
    assert.equal(registry.validateConfig('session_file_system', { max_file_size: 1024 }), null);
    assert.equal(registry.validateConfig('current_time', { default_timezone: 'Europe/Paris' }), null);
    assert.equal(registry.validateConfig('stateless_todo_list', {}), null);
  });

  it('validateConfig reports unknown keys, bad values, bad zones and unknown ids', () => {
    const registry = createCapabilityRegistry();
    assert.deepEqual(registry.validateConfig('web_fetch', { timeout: 5 }), ['timeout is not a known setting']);
    assert.deepEqual(registry.validateConfig('web_fetch', { timeout_ms: 'fast' }), ['timeout_ms must be integer']);
    assert.deepEqual(registry.validateConfig('current_time', { default_timezone: 'Mars/Base' }), [
      'default_timezone must be an IANA time zone',
    ]);
    assert.deepEqual(registry.validateConfig('session_storage', []), ['config must be object']);
    assert.deepEqual(registry.validateConfig('nope', {}), ['Unknown capability: nope']);
  });

  it('refuses duplicate ids, duplicate tool names and unknown dependencies at construction', () => {
    assert.throws(() => createCapabilityRegistry({ capabilities: [cap('a'), cap('a')] }), /unique/);
    assert.throws(
      () => createCapabilityRegistry({ capabilities: [cap('a', { tools: [tool('t')] }), cap('b', { tools: [tool('t')] })] }),
      /Tool t is defined by both a and b/,
    );
    assert.throws(() => createCapabilityRegistry({ capabilities: [cap('a', { dependencies: ['zz'] })] }), /unknown capability zz/);
  });
});
