import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { runActStep, TOOL_FAILED_MESSAGE } from '../../actors/session/steps/act-step.js';
import { unavailableToolStorage } from '../../actors/session/steps/tool-context.js';
import type { ToolCallRef } from '../../src/turns/turn-events.js';
import type { NewSessionEvent } from '../../schemas/events.js';
import { ToolError, type ResolvedTool, type ToolContext, type ToolResult } from '../../src/capabilities/index.js';
import { dataOf } from '../helpers/raw-log.js';

function tool(name: string, execute: (args: unknown, ctx: ToolContext) => Promise<ToolResult>): ResolvedTool {
  return {
    name,
    display_name: name.toUpperCase(),
    description: '',
    parameters: { type: 'object' },
    capability_id: 'test',
    config: {},
    execute,
  };
}

function harness(
  tools: ResolvedTool[],
  calls: ToolCallRef[],
  opts: { timeoutMs?: number; signal?: AbortSignal; drain?: AbortSignal; maxParallel?: number; commitMs?: number } = {},
) {
  const committed: NewSessionEvent[] = [];
  let n = 0;
  const commit = async (events: NewSessionEvent[]) => {
    if (opts.commitMs) await new Promise((r) => setTimeout(r, opts.commitMs));
    committed.push(...events);
  };
  const run = runActStep(
    { commit, newId: () => `id${++n}`, now: () => new Date(), log: pino({ level: 'silent' }) },
    {
      turn: { turn_id: 't', input_message_id: 'm' },
      session: { session_id: 's', org_id: 'o' },
      calls,
      tools: new Map(tools.map((t) => [t.name, t])),
      storage: unavailableToolStorage({ session_id: 's', org_id: 'o' }) as never,
      signal: opts.signal ?? new AbortController().signal,
      drain: opts.drain,
      timeoutMs: opts.timeoutMs ?? 5_000,
      maxParallel: opts.maxParallel ?? 10,
    },
  );
  return { run, committed };
}

const call = (id: string, name: string): ToolCallRef => ({ id, name, arguments: {} });
const completedOf = (events: NewSessionEvent[], id: string) =>
  dataOf(events.find((e) => e.type === 'tool.completed' && dataOf(e)['tool_call_id'] === id));

describe('act step', () => {
  it('runs at most maxParallel tools at once and pairs every call', async () => {
    let running = 0;
    let peak = 0;
    const slow = tool('slow', async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 30));
      running--;
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    const calls = Array.from({ length: 25 }, (_, i) => call(`c${i}`, 'slow'));
    const { run, committed } = harness([slow], calls);
    await run;
    assert.equal(peak, 10);
    assert.equal(committed.filter((e) => e.type === 'tool.started').length, 25);
    assert.equal(committed.filter((e) => e.type === 'tool.completed').length, 25);
  });

  it('hides internal errors, passes ToolError messages, reports unknown tools and timeouts', async () => {
    const boom = tool('boom', async () => {
      throw new Error('password=hunter2 at db.internal:5432');
    });
    const polite = tool('polite', async () => {
      throw new ToolError('File not found: /x');
    });
    const hang = tool('hang', () => new Promise(() => undefined)); // ignores its signal
    const storage = tool('storage', async (_a, ctx) => {
      await ctx.kv.get('k');
      return { content: [] };
    });
    const { run, committed } = harness(
      [boom, polite, hang, storage],
      [call('a', 'boom'), call('b', 'polite'), call('c', 'nope'), call('d', 'hang'), call('e', 'storage')],
      { timeoutMs: 50 },
    );
    await run;
    assert.deepEqual(completedOf(committed, 'a')['error'], TOOL_FAILED_MESSAGE);
    assert.equal(completedOf(committed, 'b')['error'], 'File not found: /x');
    assert.equal(completedOf(committed, 'c')['error'], 'Unknown tool: nope');
    assert.equal(completedOf(committed, 'd')['error'], 'Tool timed out after 50 ms');
    assert.equal(completedOf(committed, 'e')['error'], 'capability storage unavailable');
    for (const id of 'abcde') {
      const d = completedOf(committed, id);
      assert.equal(d['success'], false);
      assert.equal(d['status'], 'error');
    }
    assert.equal(JSON.stringify(committed).includes('hunter2'), false);
  });

  it('tool.started is committed before the tool runs and shares its exec_id with tool.completed', async () => {
    const order: string[] = [];
    const committed: NewSessionEvent[] = [];
    const t = tool('t', async () => {
      order.push('run');
      return { content: [{ type: 'text', text: 'x' }] };
    });
    let n = 0;
    await runActStep(
      {
        commit: async (events) => void (order.push(...events.map((e) => e.type)), committed.push(...events)),
        newId: () => `id${++n}`,
        now: () => new Date(),
        log: pino({ level: 'silent' }),
      },
      {
        turn: { turn_id: 't', input_message_id: 'm' },
        session: { session_id: 's', org_id: 'o' },
        calls: [call('a', 't')],
        tools: new Map([['t', t]]),
        storage: unavailableToolStorage({ session_id: 's', org_id: 'o' }) as never,
        signal: new AbortController().signal,
        timeoutMs: 1000,
        maxParallel: 10,
      },
    );
    assert.deepEqual(order, ['tool.started', 'run', 'tool.completed']);
    assert.equal(committed[0]!.context!.exec_id, committed[1]!.context!.exec_id);
    assert.deepEqual(dataOf(committed[1])['result'], [{ type: 'text', text: 'x' }]);
  });

  it('on abort (cancel): running tools are told, none start, no result is invented for the aborted ones', async () => {
    const ac = new AbortController();
    let sawAbort = false;
    const wait = tool(
      'wait',
      (_a, ctx) =>
        new Promise((_, reject) => ctx.signal.addEventListener('abort', () => ((sawAbort = true), reject(new Error('aborted'))))),
    );
    const calls = Array.from({ length: 12 }, (_, i) => call(`c${i}`, 'wait'));
    const { run, committed } = harness([wait], calls, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('cancelled')), 20);
    await assert.rejects(run, /cancelled/);
    assert.ok(sawAbort);
    assert.equal(committed.filter((e) => e.type === 'tool.started').length, 10);
    assert.equal(committed.filter((e) => e.type === 'tool.completed').length, 0);
  });

  it('resolves only after every tool.completed is stored (a slow append is waited for)', async () => {
    const quick = tool('quick', async () => ({ content: [{ type: 'text', text: 'done' }] }));
    const { run, committed } = harness([quick], [call('a', 'quick'), call('b', 'quick')], { commitMs: 50 });
    await run;
    assert.equal(committed.filter((e) => e.type === 'tool.completed').length, 2);
    assert.equal(completedOf(committed, 'a')['success'], true);
  });

  it('on drain (shutdown): running tools finish and are recorded as succeeded, no new ones start', async () => {
    const drain = new AbortController();
    let sawAbort = false;
    const slow = tool('slow', async (_a, ctx) => {
      ctx.signal.addEventListener('abort', () => (sawAbort = true));
      await new Promise((r) => setTimeout(r, 100));
      return { content: [{ type: 'text', text: 'fetched' }] };
    });
    const calls = [call('a', 'slow'), call('b', 'slow'), call('c', 'slow')];
    const { run, committed } = harness([slow], calls, { drain: drain.signal, maxParallel: 2 });
    setTimeout(() => drain.abort(new Error('shutdown')), 20);
    await assert.rejects(run, /shutdown/); // call c never started: the next attempt runs it
    assert.equal(sawAbort, false);
    assert.equal(committed.filter((e) => e.type === 'tool.started').length, 2);
    for (const id of ['a', 'b']) assert.equal(completedOf(committed, id)['success'], true);
  });

  it('on drain after the last call started: resolves normally once the running tools finished', async () => {
    const drain = new AbortController();
    const slow = tool('slow', async () => {
      await new Promise((r) => setTimeout(r, 60));
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    const { run, committed } = harness([slow], [call('a', 'slow')], { drain: drain.signal });
    setTimeout(() => drain.abort(new Error('shutdown')), 10);
    await run;
    assert.equal(completedOf(committed, 'a')['success'], true);
  });
});
