import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { defineCapability, defineTool, jsonResult, textResult, toToolError } from '../../src/capabilities/define.js';
import { ToolError } from '../../src/capabilities/types.js';
import { NotFoundError, ServiceUnavailableError } from '../../src/errors.js';
import { createFakeToolContext } from './fakes.js';

const echo = defineTool({
  name: 'echo',
  display_name: 'Echo',
  description: 'Echoes its arguments.',
  parameters: Type.Object(
    { text: Type.String({ minLength: 1 }), times: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, default: 1 })) },
    { additionalProperties: false },
  ),
  async run(args) {
    return textResult(args.text.repeat(args.times ?? 0));
  },
});

describe('defineTool', () => {
  it('exposes plain JSON Schema parameters', () => {
    assert.equal(Object.getOwnPropertySymbols(echo.parameters).length, 0);
    assert.deepEqual(echo.parameters['required'], ['text']);
  });

  it("validates arguments, applying defaults without mutating the caller's object", async () => {
    const args = { text: 'ab' };
    assert.equal((await echo.execute(args, createFakeToolContext())).content[0]!.text, 'ab');
    assert.deepEqual(args, { text: 'ab' });
    assert.equal((await echo.execute({ text: 'ab', times: 2 }, createFakeToolContext())).content[0]!.text, 'abab');
  });

  it('describes invalid arguments for the LLM', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(echo.execute({}, ctx), { name: 'ToolError', message: 'Invalid arguments: "text" is required' });
    await assert.rejects(echo.execute(null, ctx), { message: 'Invalid arguments: "text" is required' });
    await assert.rejects(echo.execute({ text: 'a', times: 9 }, ctx), { message: 'Invalid arguments: "times" must be <= 3' });
    await assert.rejects(echo.execute({ text: 'a', loud: true }, ctx), { message: 'Invalid arguments: "loud" is not a known parameter' });
    await assert.rejects(echo.execute('text', ctx), { message: 'Invalid arguments: arguments must be object' });
  });

  it('maps 4xx storage errors to ToolErrors and passes everything else through', async () => {
    const failing = (err: unknown) =>
      defineTool({ name: 'f', display_name: 'F', description: 'fails', parameters: Type.Object({}), run: async () => Promise.reject(err) });
    const ctx = createFakeToolContext();
    await assert.rejects(
      failing(new NotFoundError('File not found: /x')).execute({}, ctx),
      (e: unknown) => e instanceof ToolError && e.message === 'File not found: /x',
    );
    const outage = new ServiceUnavailableError();
    await assert.rejects(failing(outage).execute({}, ctx), (e: unknown) => e === outage);
    const bug = new TypeError('x is undefined');
    await assert.rejects(failing(bug).execute({}, ctx), (e: unknown) => e === bug);
    assert.equal(toToolError('plain'), 'plain');
  });
});

describe('defineCapability and results', () => {
  it('derives display names and defaults', () => {
    const cap = defineCapability({ id: 'x', name: 'X', description: 'd', prompt: 'p', tools: [echo], configSchema: Type.Object({}) });
    assert.deepEqual(cap.displayNames, { echo: 'Echo' });
    assert.deepEqual(cap.features, []);
    assert.deepEqual(cap.dependencies, []);
    assert.deepEqual(cap.configSchema, { type: 'object', properties: {} });
  });

  it('serialises JSON results as text parts', () => {
    assert.deepEqual(jsonResult({ a: 1 }, { type: 'text', text: 'more' }), {
      content: [
        { type: 'text', text: '{\n  "a": 1\n}' },
        { type: 'text', text: 'more' },
      ],
    });
  });
});
