import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeAnthropic } from '../../llm/fakes/anthropic.js';
import type { FakeLlmServer } from '../../llm/fakes/fake-server.js';
import { startFakeGemini } from '../../llm/fakes/gemini.js';
import { startFakeOpenAi } from '../../llm/fakes/openai.js';
import { createSession, sendMessage, waitForEvent, type StoredEvent } from '../../turns/helpers.js';
import { addModel, createProvider, fakeVendorKey, useSuiteApp } from '../llm-providers/helpers.js';

/**
 * Issue 26 item 4: structured replies through the official SDKs against the wire fakes. Each
 * vendor's request carries its native structured output (OpenAI `text.format` and
 * `response_format`, Gemini `responseMimeType` + `responseJsonSchema`, Anthropic a forced tool).
 */

const KEY = fakeVendorKey('sk-structured');
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, degrees: { type: 'number' } },
  required: ['city', 'degrees'],
  additionalProperties: false,
};
const FORMAT = { type: 'json_schema', json_schema: { name: 'weather', schema: SCHEMA, strict: true } };
const VALID = { city: 'Oslo', degrees: -3.5 };

const ofType = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type);

describe('structured replies: vendor-native formats through the SDKs (postgres)', () => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  let gemini: FakeLlmServer;
  before(async () => {
    [openai, anthropic, gemini] = await Promise.all([
      startFakeOpenAi({ api_key: KEY }),
      startFakeAnthropic({ api_key: KEY }),
      startFakeGemini({ api_key: KEY }),
    ]);
  });
  after(async () => Promise.all([openai.close(), anthropic.close(), gemini.close()]));
  const app = useSuiteApp();

  async function runTurn(providerType: string, baseUrl: string, model: string): Promise<StoredEvent[]> {
    const p = await createProvider(app(), { provider_type: providerType, api_key: KEY, base_url: baseUrl });
    const m = await addModel(app(), p['id'], { model_id: model });
    const session = await createSession(app(), { default_model_id: m['id'] });
    const sent = await sendMessage(app(), session.id, 'Weather in Oslo?', { response_format: FORMAT });
    assert.equal(sent.status, 201, sent.text);
    return waitForEvent(app(), session.id, 'session.idled');
  }
  const requestsFor = (fake: FakeLlmServer, model: string) =>
    fake.requests.filter((r) => JSON.stringify(r.body ?? {}).includes(model) || r.url.includes(model));

  it('openai (Responses): text.format is the json_schema; output.message.completed carries parsed', async () => {
    openai.enqueue({ type: 'reply', reply: { text: [JSON.stringify(VALID)] } });
    const events = await runTurn('openai', `${openai.origin}/v1`, 'gpt-structured');
    assert.deepEqual(ofType(events, 'output.message.completed')[0]!.data['parsed'], VALID);
    const [req] = requestsFor(openai, 'gpt-structured').filter((r) => r.url.startsWith('/v1/responses'));
    assert.deepEqual(req!.body.text.format, { type: 'json_schema', name: 'weather', schema: SCHEMA, strict: true });
  });

  it('openai_completions: response_format on both steps; an invalid reply is repaired with a note of its errors', async () => {
    openai.enqueue({ type: 'reply', reply: { text: ['{"city":"Oslo"}'] } }, { type: 'reply', reply: { text: [JSON.stringify(VALID)] } });
    const events = await runTurn('openai_completions', `${openai.origin}/v1`, 'gpt-chat-structured');
    const completed = ofType(events, 'output.message.completed');
    assert.deepEqual(completed[0]!.data['structured_output_errors'], ["/ must have required property 'degrees'"]);
    assert.deepEqual(completed[1]!.data['parsed'], VALID);
    assert.equal(ofType(events, 'turn.completed').length, 1);
    const reqs = requestsFor(openai, 'gpt-chat-structured').filter((r) => r.url.startsWith('/v1/chat/completions'));
    assert.equal(reqs.length, 2);
    for (const r of reqs)
      assert.deepEqual(r.body.response_format, { type: 'json_schema', json_schema: { name: 'weather', schema: SCHEMA, strict: true } });
    const note = reqs[1]!.body.messages.at(-1);
    assert.equal(note.role, 'user');
    assert.match(JSON.stringify(note.content), /did not match the required response format.*degrees/);
  });

  it('anthropic: a forced structured_reply tool with the schema; its input is the reply', async () => {
    anthropic.enqueue({ type: 'reply', reply: { tool_calls: [{ id: 'toolu_1', name: 'structured_reply', arguments: VALID }] } });
    const events = await runTurn('anthropic', anthropic.origin, 'claude-structured');
    const completed = ofType(events, 'output.message.completed');
    assert.equal(completed.length, 1);
    assert.deepEqual(completed[0]!.data['parsed'], VALID);
    assert.deepEqual(completed[0]!.data['message'].content, [{ type: 'text', text: JSON.stringify(VALID) }]);
    assert.equal(ofType(events, 'act.started').length, 0, 'the reply tool is not run as a tool');
    const [req] = requestsFor(anthropic, 'claude-structured');
    const tool = req!.body.tools.find((t: { name: string }) => t.name === 'structured_reply');
    assert.deepEqual(tool.input_schema, SCHEMA);
    assert.deepEqual(req!.body.tool_choice, { type: 'tool', name: 'structured_reply' });
  });

  it('gemini: responseMimeType + responseJsonSchema; still invalid after the repair → turn.failed invalid_structured_output', async () => {
    gemini.enqueue({ type: 'reply', reply: { text: ['sunny'] } }, { type: 'reply', reply: { text: ['{"city":1,"degrees":2}'] } });
    const events = await runTurn('gemini', gemini.origin, 'gemini-3-structured');
    const failed = ofType(events, 'turn.failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.data['error_code'], 'invalid_structured_output');
    assert.match(failed[0]!.data['error'], /\/city must be string/);
    const reqs = requestsFor(gemini, 'gemini-3-structured');
    assert.equal(reqs.length, 2);
    for (const r of reqs) {
      assert.equal(r.body.generationConfig.responseMimeType, 'application/json');
      assert.deepEqual(r.body.generationConfig.responseJsonSchema, SCHEMA);
    }
  });
});
