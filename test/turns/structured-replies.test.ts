import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createSession, listEvents, sendMessage, waitForEvent, type StoredEvent } from './helpers.js';

/** Issue 26 item 4: `controls.response_format` through llmsim (docs/llmsim.md `@json`), embedded and on NATS. */

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const format = (schema: Record<string, unknown> = PERSON) => ({ type: 'json_schema', json_schema: { name: 'person', schema } });

const ofType = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type);

async function turn(app: TestApp, text: string, controls: Record<string, unknown>): Promise<StoredEvent[]> {
  const { id } = await createSession(app);
  const r = await sendMessage(app, id, text, controls);
  assert.equal(r.status, 201, r.text);
  return waitForEvent(app, id, 'session.idled');
}

for (const mode of ['pglite', 'nats'] as const) {
  describe(`structured replies through llmsim (${mode})`, () => {
    it('valid, invalid-then-repaired, invalid twice → invalid_structured_output; bad schemas → 400', async (t) => {
      const app = await startTestApp(t, { mode });

      // Valid at once: parsed carries the object, one reason step.
      let events = await turn(app, '@json {"name":"Ada","age":36}', { response_format: format() });
      let completed = ofType(events, 'output.message.completed');
      assert.equal(completed.length, 1);
      assert.deepEqual(completed[0]!.data['parsed'], { name: 'Ada', age: 36 });
      assert.equal(completed[0]!.data['structured_output_errors'], undefined);
      assert.equal(ofType(events, 'turn.completed').length, 1);

      // Invalid, then one repair step whose (schema-made) reply validates.
      events = await turn(app, '@json {"name":"Ada","age":"old"}', { response_format: format() });
      completed = ofType(events, 'output.message.completed');
      assert.equal(completed.length, 2, events.map((e) => e.type).join(','));
      assert.match(String(completed[0]!.data['structured_output_errors']), /\/age must be integer/);
      assert.equal(completed[0]!.data['parsed'], undefined);
      assert.deepEqual(completed[1]!.data['parsed'], { name: '', age: 0 });
      assert.deepEqual(
        ofType(events, 'reason.started').map((e) => e.data['iteration']),
        [1, 2],
      );
      assert.equal(ofType(events, 'turn.completed').length, 1);
      assert.equal(ofType(events, 'turn.failed').length, 0);

      // Not JSON, and the repair is no better: the turn fails with a clear code after exactly one repair.
      events = await turn(app, '@json-always this is not json', { response_format: format() });
      completed = ofType(events, 'output.message.completed');
      assert.equal(completed.length, 2);
      assert.match(completed[1]!.data['structured_output_errors'][0], /not JSON/);
      const failed = ofType(events, 'turn.failed');
      assert.equal(failed.length, 1);
      assert.equal(failed[0]!.data['error_code'], 'invalid_structured_output');
      assert.match(failed[0]!.data['error'], /did not match the response format after 1 repair/);
      assert.equal(ofType(events, 'turn.completed').length, 0);

      // json_object: any JSON object (llmsim answers `{}`).
      events = await turn(app, 'hello', { response_format: { type: 'json_object' } });
      assert.deepEqual(ofType(events, 'output.message.completed')[0]!.data['parsed'], {});

      // Bad schemas: 400 at request time, nothing appended.
      const { id } = await createSession(app);
      const before = (await listEvents(app, id)).length;
      const bad = [
        { response_format: format({ type: 'no-such-type' }) },
        { response_format: format({ type: 'object', required: 'name' }) },
        { response_format: format({ $ref: '#/definitions/missing' }) },
        { response_format: { type: 'json_schema', json_schema: { name: 'has space', schema: PERSON } } },
        { response_format: { type: 'json_schema' } },
        { response_format: { type: 'text' } },
        { response_format: format({ type: 'object', description: 'x'.repeat(70_000) }) },
      ];
      for (const controls of bad) {
        const r = await sendMessage(app, id, 'x', controls);
        assert.equal(r.status, 400, `${JSON.stringify(controls).slice(0, 120)}: ${r.text}`);
        assert.equal(r.body.status, 400);
        assert.doesNotMatch(r.text, /ajv|parse-jobs|offthread|at .*\.ts/i);
      }
      const tooBig = await sendMessage(app, id, 'x', bad.at(-1)!);
      assert.match(tooBig.body.error, /at most 65536/);
      const wrongType = await sendMessage(app, id, 'x', bad[0]!);
      assert.match(wrongType.body.error, /controls\.response_format\.json_schema\.schema is not a valid JSON Schema/);
      assert.equal((await listEvents(app, id)).length, before, 'a refused message appends nothing');
    });
  });
}
