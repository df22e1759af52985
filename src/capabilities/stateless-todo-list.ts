import { Type } from '@sinclair/typebox';
import { StringEnum, defineCapability, defineTool, jsonResult } from './define.js';
import { ToolError } from './types.js';

export const STATELESS_TODO_LIST_ID = 'stateless_todo_list';
export const MAX_TODOS = 100;
export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const;

const Todo = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: 1000, description: 'What needs doing, imperative ("Write the report").' }),
    status: StringEnum(TODO_STATUSES, { description: 'pending, in_progress or completed.' }),
  },
  { additionalProperties: false },
);

const writeTodos = defineTool({
  name: 'write_todos',
  display_name: 'Write Todos',
  description:
    'Replaces your task list with the full list given. Send every item each time (not only changes); at most one item may be in_progress.',
  parameters: Type.Object(
    { todos: Type.Array(Todo, { maxItems: MAX_TODOS, description: 'The complete, ordered task list.' }) },
    { additionalProperties: false },
  ),
  async run({ todos }) {
    const inProgress = todos.filter((t) => t.status === 'in_progress').length;
    if (inProgress > 1) {
      throw new ToolError(`Only one todo may be in_progress at a time; ${inProgress} are. Mark the others pending or completed.`);
    }
    const counts = Object.fromEntries(TODO_STATUSES.map((s) => [s, todos.filter((t) => t.status === s).length]));
    return jsonResult({ todos, total: todos.length, ...counts });
  },
});

/** The list lives in the conversation: each call's arguments (echoed back) are the current state. */
export const statelessTodoListCapability = defineCapability({
  id: STATELESS_TODO_LIST_ID,
  name: 'Todo List',
  description: 'A task list for multi-step work. Stateless: the list lives in the conversation, each write_todos call replaces it.',
  prompt: [
    'For work with three or more steps, keep a task list with `write_todos`: write it before you start,',
    'mark an item in_progress when you begin it and completed as soon as it is done, and add items you discover.',
    'Each call replaces the whole list, so always send every item. Keep at most one item in_progress.',
    'Skip the list for simple one-step requests.',
  ].join(' '),
  tools: [writeTodos],
  configSchema: Type.Object({}, { additionalProperties: false }),
});
