import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { audit, type ChaosData, type LoggedEvent, type SessionData } from '../../bench/chaos/audit.js';

const T0 = Date.parse('2026-11-27T12:00:00.000Z');
const TOOL_URL = 'http://127.0.0.1:1/slow?ms=1000&id=';

/** A log builder: events get consecutive sequences and ids, 100 ms apart, in one turn. */
function turnLog(turnId: string, messageId: string, types: [string, Record<string, unknown>?][], start = 1): LoggedEvent[] {
  return types.map(([type, data = {}], i) => ({
    id: `${turnId}-e${start + i}`,
    type,
    ts: new Date(T0 + (start + i) * 100).toISOString(),
    sequence: start + i,
    context: { turn_id: turnId, ...(type.startsWith('tool.') ? { exec_id: 'x1' } : {}) },
    data: type === 'turn.started' ? { turn_id: turnId, input_message_id: messageId, ...data } : { turn_id: turnId, ...data },
  }));
}

/** A complete turn with one tool call (call key `key`), as the service logs it. */
function toolTurn(turnId: string, messageId: string, key: string, success = true, start = 1): LoggedEvent[] {
  const call = { id: `call-${turnId}`, name: 'fetch_url', arguments: { url: `${TOOL_URL}${key}` } };
  return turnLog(
    turnId,
    messageId,
    [
      ['input.message'],
      ['turn.started'],
      ['session.activated'],
      ['reason.started', { iteration: 1 }],
      ['llm.generation', { iteration: 1 }],
      ['reason.completed', { iteration: 1 }],
      ['act.started', { iteration: 1 }],
      ['tool.started', { tool_call: call }],
      [
        'tool.completed',
        success ? { tool_call_id: call.id, success: true } : { tool_call_id: call.id, success: false, error: 'interrupted' },
      ],
      ['act.completed', { iteration: 1 }],
      ['reason.started', { iteration: 2 }],
      ['llm.generation', { iteration: 2 }],
      ['reason.completed', { iteration: 2 }],
      ['turn.completed'],
      ['session.idled'],
    ],
    start,
  );
}

function session(id: string, log: LoggedEvent[], sseReceived = log.map((e) => e.id)): SessionData {
  return { id, log, sseReceived };
}

function data(sessions: SessionData[], extra: Partial<ChaosData> = {}): ChaosData {
  const posted = sessions.flatMap((s) =>
    s.log.filter((e) => e.type === 'turn.started').map((e) => ({ sessionId: s.id, messageId: e.data['input_message_id'], at: T0 })),
  );
  const tools = sessions.flatMap((s) =>
    s.log
      .filter((e) => e.type === 'tool.started')
      .map((e) => ({ callKey: new URL(e.data['tool_call'].arguments.url).searchParams.get('id')!, hits: 1, answered: true })),
  );
  return { sessions, posted, requests: [], faults: [], tools, ...extra };
}

describe('chaos audit', () => {
  it('a clean run has zeros everywhere', () => {
    const r = audit(data([session('s1', toolTurn('t1', 'm1', 'k1'))]));
    assert.deepEqual(r.turns, {
      posted: 1,
      logged: 1,
      completed: 1,
      failed: 0,
      cancelled: 0,
      stuck: 0,
      lost: 0,
      unconfirmed: 0,
      refusedThenRan: 0,
    });
    assert.equal(r.duplicateIds + r.sequenceGaps + r.missingStepEvents.total, 0);
    assert.deepEqual(r.tools, {
      calls: 1,
      runTwice: 0,
      succeededRecordedFailed: 0,
      answeredThenKilled: 0,
      duplicateResults: 0,
      neverRun: 0,
    });
    assert.deepEqual(r.sse, { followers: 1, received: 15, lost: 0, repeated: 0, outOfOrder: 0, unknown: 0 });
    assert.deepEqual(r.examples, []);
  });

  it('counts a turn started by a POST that was answered 5xx (issue 32 item 1)', () => {
    const log = toolTurn('t1', 'm1', 'k1');
    log[0]!.data = { message: { id: 'm1', metadata: { post: 's1.0.0' } } };
    const d = data([session('s1', log)], { posted: [], refused: [{ sessionId: 's1', post: 's1.0.0', at: T0 }] });
    const r = audit(d);
    assert.deepEqual([r.turns.refusedThenRan, r.turns.unconfirmed], [1, 1]);
    assert.match(r.examples.join('\n'), /answered 5xx and stored anyway/);
    // The same message answered 201 on a retry (the same effect its retry returned): not counted.
    d.posted = [{ sessionId: 's1', messageId: 'm1', at: T0 }];
    assert.deepEqual([audit(d).turns.refusedThenRan, audit(d).turns.unconfirmed], [0, 0]);
  });

  it('counts a duplicate event id and a sequence gap', () => {
    const log = toolTurn('t1', 'm1', 'k1');
    log[4] = { ...log[4]!, id: log[3]!.id };
    log.splice(8, 1, ...log.slice(8).map((e) => ({ ...e, sequence: e.sequence + 1 })));
    log.length = 15;
    const r = audit(data([session('s1', log)]));
    assert.equal(r.duplicateIds, 1);
    assert.equal(r.sequenceGaps, 1);
    assert.ok(r.examples.some((x) => x.includes('twice')));
  });

  it('counts a tool run twice and a succeeded tool recorded as failed', () => {
    const d = data([session('s1', toolTurn('t1', 'm1', 'k1', false))]);
    d.tools = [{ callKey: 'k1', hits: 2, answered: true }];
    const r = audit(d);
    assert.equal(r.tools.runTwice, 1);
    assert.equal(r.tools.succeededRecordedFailed, 1);
    // A failed result for a call the server never answered is not a defect (the instance died first).
    d.tools = [{ callKey: 'k1', hits: 1, answered: false }];
    assert.equal(audit(d).tools.succeededRecordedFailed, 0);
    // Nor is one answered just before a SIGKILL hit (the worker died before it could record it) …
    d.tools = [{ callKey: 'k1', hits: 1, answered: true, answeredAt: T0 }];
    const kill = { kind: 'kill-tool' as const, repetition: 1, target: 'i1', healedAt: T0 + 5000, windowEnd: T0 + 9000 };
    d.faults = [{ ...kill, injectedAt: T0 + 300, affectedSessions: ['s1'], restartToHealthyMs: 1 }];
    assert.deepEqual([audit(d).tools.succeededRecordedFailed, audit(d).tools.answeredThenKilled], [0, 1]);
    // … nor one the server wrote just after the kill, to the dead process's socket …
    d.faults = [{ ...kill, injectedAt: T0 - 300, affectedSessions: ['s1'], restartToHealthyMs: 1 }];
    assert.deepEqual([audit(d).tools.succeededRecordedFailed, audit(d).tools.answeredThenKilled], [0, 1]);
    // … but one answered long before the kill, or before a graceful SIGTERM, is.
    d.faults = [{ ...kill, injectedAt: T0 + 3000, affectedSessions: ['s1'], restartToHealthyMs: 1 }];
    assert.equal(audit(d).tools.succeededRecordedFailed, 1);
    d.faults = [{ ...kill, kind: 'term', injectedAt: T0 + 300, affectedSessions: ['s1'], restartToHealthyMs: 1 }];
    assert.equal(audit(d).tools.succeededRecordedFailed, 1);
  });

  it('counts missing step events of a completed turn: reason.completed, llm.generation, session.activated', () => {
    const log = toolTurn('t1', 'm1', 'k1').filter(
      (e) => !(e.type === 'reason.completed' && e.data['iteration'] === 2) && e.type !== 'session.activated',
    );
    const renumbered = log.map((e, i) => ({ ...e, sequence: i + 1 }));
    const r = audit(data([session('s1', renumbered)]));
    assert.deepEqual(r.missingStepEvents.byKind, { 'reason.completed': 1, 'session.activated': 1 });
    assert.equal(r.missingStepEvents.total, 2);
    assert.equal(r.sequenceGaps, 0);
  });

  it('counts stuck, failed and lost turns', () => {
    const stuck = turnLog('t2', 'm2', [['input.message'], ['turn.started'], ['session.activated']]);
    const failed = turnLog('t3', 'm3', [['input.message'], ['turn.started'], ['turn.failed', { error_code: 'llm_error', error: 'x' }]], 4);
    const d = data([session('s1', [...stuck, ...failed])]);
    d.posted.push({ sessionId: 's1', messageId: 'm-never-logged', at: T0 });
    d.posted = d.posted.filter((p) => p.messageId !== 'm3');
    const r = audit(d);
    assert.equal(r.turns.unconfirmed, 1, 'turn t3 ran although its POST never got a 201');
    assert.equal(r.turns.stuck, 1);
    assert.equal(r.turns.failed, 1);
    assert.equal(r.turns.lost, 1);
    assert.equal(r.turns.posted, 2);
  });

  it('counts SSE events lost, repeated and out of order', () => {
    const log = toolTurn('t1', 'm1', 'k1');
    const ids = log.map((e) => e.id);
    const received = [ids[0]!, ids[2]!, ids[1]!, ids[2]!, ...ids.slice(3, 14)]; // #2 after #3, #3 twice, #15 never
    const r = audit(data([session('s1', log, received)]));
    assert.equal(r.sse.lost, 1);
    assert.equal(r.sse.repeated, 1);
    assert.equal(r.sse.outOfOrder, 1);
  });

  it('measures the wait of idempotent retries whose first attempt failed inside a fault window', () => {
    const fault = {
      kind: 'kill-llm' as const,
      repetition: 1,
      target: 'i1',
      injectedAt: T0 + 100,
      healedAt: T0 + 200,
      windowEnd: T0 + 300,
      affectedSessions: [],
      restartToHealthyMs: 80,
    };
    const d = data([session('s1', toolTurn('t1', 'm1', 'k1'))], { faults: [fault] });
    d.posted.push(
      { sessionId: 's1', messageId: 'late', at: T0 + 1_150, retriedFrom: T0 + 150 },
      { sessionId: 's1', messageId: 'quick', at: T0 + 260, retriedFrom: T0 + 250 },
      { sessionId: 's1', messageId: 'before', at: T0 + 5_000, retriedFrom: T0 + 50 },
    );
    assert.equal(audit(d).faults[0]!.retryWaitMaxMs, 1_000, 'the longest wait of the retries that began in the window');
  });

  it('splits 5xx and busy 409s inside and outside fault windows and measures recovery from the log', () => {
    const log = toolTurn('t1', 'm1', 'k1');
    const d = data([session('s1', log)], {
      requests: [
        { at: T0 + 50, instance: 'i1', kind: 'events', status: 500 },
        { at: T0 + 350, instance: 'i1', kind: 'messages', status: 503 },
        { at: T0 + 360, instance: 'i2', kind: 'messages', status: 500 },
        { at: T0 + 370, instance: 'i2', kind: 'messages', status: 0, error: 'ECONNREFUSED' },
        { at: T0 + 380, instance: 'i3', kind: 'messages', status: 409 },
        { at: T0 + 600, instance: 'i3', kind: 'messages', status: 409 },
        { at: T0 + 610, instance: 'i3', kind: 'tool-results', status: 409 },
      ],
      faults: [
        {
          kind: 'kill-llm',
          repetition: 1,
          target: 'i1',
          injectedAt: T0 + 320,
          healedAt: T0 + 400,
          windowEnd: T0 + 500,
          affectedSessions: ['s1'],
          restartToHealthyMs: 80,
        },
      ],
    });
    const r = audit(d);
    assert.deepEqual(
      { ...r.http, requests: undefined },
      {
        requests: undefined,
        outside5xx: 1,
        inside5xx: 2,
        inside503: 1,
        inside500: 1,
        noAnswerOutside: 0,
        noAnswerInside: 1,
        busyOutside: 1,
        busyInside: 1,
      },
    );
    const f = r.faults[0]!;
    assert.equal(f.retryWaitMaxMs, null, 'no POST was retried');
    assert.equal(f.recoveryFirstMs, 80, 'event #4 at +400 ms is the first after the fault at +320 ms');
    assert.equal(f.unrecovered, 0);
    assert.equal(f.status500, 1);
    assert.equal(f.busy409, 1, 'only the POST of a message inside the window counts');
  });
});
