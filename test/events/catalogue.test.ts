import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import { EVENT_TYPES } from '../../schemas/event-types.js';
import { namedSchemas } from '../../schemas/index.js';
import { startTestApp } from '../helpers/app.js';
import { createSession, listEvents, sendMessage, waitForEvent } from '../turns/helpers.js';

/** The document's `Event` (one of the catalogue's schemas by `type`), compiled as a client would. */
function eventValidator() {
  const ajv = new Ajv({ strict: true, discriminator: true, allErrors: true });
  ajvFormats.default(ajv);
  for (const s of namedSchemas) ajv.addSchema(s);
  return ajv.getSchema('Event')!;
}

describe('event catalogue', () => {
  it('the API document has one schema per event type, each with an example that is valid', async (t) => {
    const app = await startTestApp(t);
    const doc = (await app.request('GET', '/api-doc/openapi.json')).body;
    const validate = eventValidator();
    const one = doc.components.schemas['Event'];
    assert.equal(one.discriminator.propertyName, 'type');
    assert.equal(one.oneOf.length, EVENT_TYPES.length);
    for (const type of EVENT_TYPES) {
      const schema = doc.components.schemas[`Event_${type.replaceAll('.', '_')}`];
      assert.ok(schema, `a schema for ${type}`);
      assert.deepEqual(schema.properties.type.const, type);
      const [example] = schema.examples;
      assert.ok(validate(example), `${type} example: ${JSON.stringify(validate.errors)}`);
    }
    // A frame description of the stream, not a bare string.
    const sse = doc.paths['/v1/sessions/{id}/sse'].get.responses['200'];
    assert.match(sse.description, /event: <type>/);
    assert.match(sse.content['text/event-stream'].example, /event: disconnecting/);
  });

  it('every event a real turn writes matches its catalogue schema, and a malformed one does not', async (t) => {
    // A low threshold: the turns after the first compact their history (`session.compacted`).
    const app = await startTestApp(t, { env: { COMPACTION_THRESHOLD_PERCENT: 10, LLMSIM_CONTEXT_WINDOW: 500 } });
    const validate = eventValidator();
    const clientTool = {
      name: 'ask_user',
      description: 'Ask the user',
      parameters: { type: 'object', properties: { question: { type: 'string' } } },
    };
    const { id } = await createSession(app, { capabilities: ['current_time'], client_tools: [clientTool] });
    // Thinking, a tool that succeeds, one that fails (unknown time zone), then the final answer.
    assert.equal(
      (
        await sendMessage(
          app,
          id,
          '@think 3\n@tool get_current_time {"timezone":"UTC"}\n@tool get_current_time {"timezone":"Nowhere/Atlantis"}',
        )
      ).status,
      201,
    );
    await waitForEvent(app, id, 'session.idled');
    // A failed turn, then a client tool the caller must run.
    assert.equal((await sendMessage(app, id, '@fail auth')).status, 201);
    await waitForEvent(app, id, 'session.idled', { n: 2 });
    assert.equal((await sendMessage(app, id, '@tool ask_user {"question":"Which city?"}')).status, 201);
    await waitForEvent(app, id, 'tool.call_requested');
    // Messages while it waits: one queued (input.queued, then input.dequeued when its turn starts), one queued and cancelled.
    const queue = (text: string) =>
      app.request('POST', `/v1/sessions/${id}/messages`, { body: { message: { content: [{ type: 'text', text }] }, on_busy: 'enqueue' } });
    assert.equal((await queue('after the cancel')).status, 202);
    const dropped = await queue('never runs');
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/queue/${dropped.body.id}`)).status, 200);
    // Cancel the suspended turn; the cancel is closed when the session is idle again, and the queued message runs.
    assert.equal((await app.request('POST', `/v1/sessions/${id}/cancel`)).status, 200);
    const events = await waitForEvent(app, id, 'session.idled', { n: 4, timeoutMs: 60_000 });
    assert.ok(events.some((e) => e.type === 'turn.cancelled'));

    // A second session whose tool waits for a person (decision 0101), denied.
    const asks = await createSession(
      app,
      { capabilities: ['current_time'] },
      { tool_approvals: [{ tool: 'get_*', policy: 'always_ask' }] },
    );
    assert.equal((await sendMessage(app, asks.id, '@tool get_current_time {}')).status, 201);
    const asked = (await waitForEvent(app, asks.id, 'tool.approval_requested')).find((e) => e.type === 'tool.approval_requested')!;
    const approvals = [{ tool_call_id: asked.data['tool_calls'][0].id, approved: false, reason: 'no' }];
    for (let r = await decideApprovals(); r.status === 409; r = await decideApprovals()) await new Promise((res) => setTimeout(res, 25));
    const approvalEvents = await waitForEvent(app, asks.id, 'session.idled');
    function decideApprovals() {
      return app.request('POST', `/v1/sessions/${asks.id}/approvals`, { body: { approvals } });
    }

    // A sub-agent call (subagent.started; tool.completed with the child's session and usage).
    const kid = await app.request('POST', '/v1/agents', { body: { name: 'catalogue-kid', system_prompt: 'You help.' } });
    assert.equal(kid.status, 201, kid.text);
    const parent = await createSession(app, { capabilities: [{ ref: 'sub_agents', config: { agents: ['catalogue-kid'] } }] });
    assert.equal((await sendMessage(app, parent.id, '@tool agent__catalogue-kid {"message":"hi"}')).status, 201);
    const nested = await waitForEvent(app, parent.id, 'session.idled');
    assert.ok(nested.some((e) => e.type === 'tool.completed' && e.data['usage'] && e.data['child_session_id']));

    for (const e of [...events, ...approvalEvents, ...nested]) assert.ok(validate(e), `${e.type}: ${JSON.stringify(validate.errors)}`);
    const seen = new Set([...events, ...approvalEvents, ...nested].map((e) => e.type));
    const unseen = EVENT_TYPES.filter((type) => !seen.has(type));
    assert.deepEqual(unseen, [], 'every type was written and checked');
    const failed = events.find((e) => e.type === 'tool.completed' && e.data['success'] === false);
    assert.ok(failed, 'a failed tool result was checked');

    const broken = { ...events.find((e) => e.type === 'turn.started')!, data: { turn_id: 1 } };
    assert.equal(validate(broken), false);
    assert.equal((await listEvents(app, id)).length, events.length);
  });
});
