import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statelessTodoListCapability } from '../../src/capabilities/stateless-todo-list.js';
import { ToolError } from '../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from './fakes.js';

const tool = toolOf(statelessTodoListCapability, 'write_todos');

describe('write_todos', () => {
  it('validates and echoes the list with counts', async () => {
    const todos = [
      { content: 'Collect data', status: 'completed' },
      { content: 'Write report', status: 'in_progress' },
      { content: 'Send report', status: 'pending' },
    ];
    const out = jsonOf(await tool.execute({ todos }, createFakeToolContext()));
    assert.deepEqual(out, { todos, total: 3, pending: 1, in_progress: 1, completed: 1 });
  });

  it('accepts an empty list (all done or cleared)', async () => {
    assert.deepEqual(jsonOf(await tool.execute({ todos: [] }, createFakeToolContext()))['total'], 0);
  });

  it('keeps no state: each call stands alone', async () => {
    const ctx = createFakeToolContext();
    await tool.execute({ todos: [{ content: 'a', status: 'pending' }] }, ctx);
    const out = jsonOf(await tool.execute({ todos: [{ content: 'b', status: 'pending' }] }, ctx));
    assert.deepEqual(out['todos'], [{ content: 'b', status: 'pending' }]);
  });

  it('refuses two items in progress', async () => {
    const todos = [
      { content: 'a', status: 'in_progress' },
      { content: 'b', status: 'in_progress' },
    ];
    await assert.rejects(
      tool.execute({ todos }, createFakeToolContext()),
      (e: unknown) => e instanceof ToolError && /Only one todo/.test(e.message),
    );
  });

  it('refuses bad statuses, empty content and missing todos', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(tool.execute({ todos: [{ content: 'a', status: 'done' }] }, ctx), /todos\.0\.status" must be one of/);
    await assert.rejects(tool.execute({ todos: [{ content: '', status: 'pending' }] }, ctx), /must NOT have fewer than 1 characters/);
    await assert.rejects(tool.execute({}, ctx), /"todos" is required/);
  });
});
