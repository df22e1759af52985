import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { after, before, describe, test } from 'node:test';
import { createLlmProvider, deriveMessages, type LlmMessage, type LlmRequest, type LlmUserMessage } from '../../src/llm/index.js';
import { createOpenAiClient, postStreaming } from '../../src/llm/openai-client.js';
import { chatBody, toChatParams } from '../../src/llm/openai-completions.js';
import { responsesBody, toResponsesParams } from '../../src/llm/openai-responses.js';
import { startFakeOpenAi } from './fakes/openai.js';
import type { FakeLlmServer } from './fakes/fake-server.js';
import { collect, request } from './provider-conformance.js';

/*
 * The OpenAI request bodies are sent pre-encoded: each message's JSON is kept and the body's bytes
 * are copied together (issue 26). What the vendor receives must be, byte for byte, the
 * `JSON.stringify` of the object body, at every step of a history that grows, is compacted (its
 * first message changes) and has images resolved per attempt (new objects): a kept encoding served
 * for a message that changed fails here.
 */
const tricky = 'say "hi" \\ \u0000\u0007\u001f \n\t é 日本 \ud83d\ude00 \u2028 </script>';
const turn = (n: number): LlmMessage[] => [
  { role: 'user', content: [{ type: 'text', text: `${tricky} question ${n}` }] },
  {
    role: 'assistant',
    content: n % 2 ? `${tricky} calling` : '',
    tool_calls: [{ id: `call_${n}`, name: 'get_current_time', arguments: { q: tricky, n } }],
  },
  { role: 'tool', tool_call_id: `call_${n}`, name: 'get_current_time', content: `${tricky} result ${n}`, is_error: n === 2 },
  { role: 'assistant', content: `${tricky} answer ${n}` },
];
const imageMessage = (data: string): LlmMessage => ({
  role: 'user',
  content: [
    { type: 'text', text: 'Look at this' },
    { type: 'image', media_type: 'image/png', data_base64: data },
  ],
});

/** A session's step-by-step histories, derived as the transcript derives them. */
function histories(): { name: string; messages: LlmMessage[] }[] {
  const out: { name: string; messages: LlmMessage[] }[] = [];
  const step = (name: string, messages: LlmMessage[], base?: LlmMessage[], shared = base?.length ?? 0) => {
    if (base) deriveMessages(messages, base, shared);
    out.push({ name, messages });
    return messages;
  };
  const first = step('first turn, with an image', [imageMessage('aW1hZ2Ux'), ...turn(0).slice(1)]);
  const grown = step('new messages appended', [...first, ...turn(1), ...turn(2)], first);
  // Compaction: a summary leads a new first message; the rest are the same objects, moved.
  const compacted = step('compacted: the first message changes', [
    { role: 'user', content: [{ type: 'text', text: `Summary: ${tricky}` }, ...(grown[4] as LlmUserMessage).content] },
    ...grown.slice(5),
  ]);
  const withImage = step(
    'an image appended',
    [...compacted, imageMessage('aW1hZ2Uy'), { role: 'assistant', content: 'a picture' }],
    compacted,
  );
  // The next attempt resolves the image anew (a new object) in place: only the prefix before it is shared.
  step(
    'the image resolved again, differently',
    [...compacted, imageMessage('aW1hZ2Uz'), { role: 'assistant', content: 'a picture' }, ...turn(3)],
    withImage,
    compacted.length,
  );
  // A shorter list derived from a longer one (a retried step after a cancelled one).
  step('a shorter derived list', compacted.slice(0, 3), withImage, 3);
  return out;
}

const variants: { name: string; req: Partial<LlmRequest> }[] = [
  { name: 'defaults', req: {} },
  {
    name: 'controls, cache key, json schema',
    req: {
      cache_key: 'session-1',
      controls: {
        max_tokens: 100,
        temperature: 0.5,
        reasoning_effort: 'low',
        response_format: {
          type: 'json_schema',
          name: 'reply',
          schema: { type: 'object', properties: { a: { type: 'string' } } },
          strict: true,
        },
      },
    },
  },
  {
    name: 'no system prompt, no tools, json object',
    req: { system: '', tools: [], controls: { response_format: { type: 'json_object' } } },
  },
];

/** The object body's encoding for the same history as new objects (nothing kept applies). */
const expected = (body: object) => Buffer.from(JSON.stringify(body));

describe('openai pre-encoded request bodies (issue 26)', () => {
  let fake: FakeLlmServer;
  before(async () => {
    fake = await startFakeOpenAi();
  });
  after(() => fake.close());

  test('openai_completions - the bytes received are JSON.stringify of the object body at every step', async () => {
    const provider = createLlmProvider({ provider_type: 'openai_completions', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    const client = createOpenAiClient({ api_key: 'test-key', base_url: `${fake.origin}/v1` });
    for (const { name, messages } of histories()) {
      for (const v of variants) {
        const req = request({ ...v.req, messages });
        const fresh = request({ ...v.req, messages: structuredClone(messages) });
        await collect(provider.stream(req));
        assert.deepEqual(fake.requests.at(-1)!.raw, expected(toChatParams(fresh, false)), `${name}, ${v.name} (provider)`);
        // OpenAI's own endpoint (prompt_cache_key, max_completion_tokens), through the same SDK call.
        await (await postStreaming(client, '/chat/completions', chatBody(req, true))).text();
        assert.deepEqual(fake.requests.at(-1)!.raw, expected(toChatParams(fresh, true)), `${name}, ${v.name} (official)`);
      }
    }
  });

  test('openai (Responses) - the bytes received are JSON.stringify of the object body at every step', async () => {
    const provider = createLlmProvider({ provider_type: 'openai', api_key: 'test-key', base_url: `${fake.origin}/v1` });
    for (const { name, messages } of histories()) {
      for (const v of variants) {
        await collect(provider.stream(request({ ...v.req, messages })));
        const fresh = request({ ...v.req, messages: structuredClone(messages) });
        assert.deepEqual(fake.requests.at(-1)!.raw, expected(toResponsesParams(fresh)), `${name}, ${v.name}`);
      }
    }
  });

  test('a message that maps to no Responses item (an empty assistant message) leaves no stray comma', async () => {
    const messages: LlmMessage[] = [...turn(0), { role: 'assistant', content: '' }, ...turn(1)];
    const req = request({ messages });
    assert.deepEqual(Buffer.concat(responsesBody(req)), expected(toResponsesParams(request({ messages: structuredClone(messages) }))));
    assert.deepEqual(
      Buffer.concat(responsesBody(request({ messages: [{ role: 'assistant', content: '' }] }))),
      expected(toResponsesParams(request({ messages: [] }))),
    );
  });

  test("a long history's bytes are sent as kept, appended in place step after step, never copied", () => {
    // ~40 KB of history: over the size below which a body is copied into one buffer.
    const long = Array.from({ length: 40 }, (_, n) => turn(n)).flat();
    const first = request({ messages: long });
    const firstParts = chatBody(first, false);
    const firstBytes = Buffer.concat(firstParts);
    assert.equal(firstParts.length, 3, 'head, history, tail');
    const next = [...long, ...turn(40)];
    deriveMessages(next, long, long.length);
    const nextParts = chatBody(request({ messages: next }), false);
    assert.equal(nextParts[1]!.buffer, firstParts[1]!.buffer, 'the next step appends to the same bytes');
    assert.equal(nextParts[1]!.byteOffset, 0);
    assert.deepEqual(Buffer.concat(nextParts), expected(toChatParams(request({ messages: structuredClone(next) }), false)));
    // The first step's view is unchanged by the append (a request in flight keeps its bytes).
    assert.deepEqual(Buffer.concat(firstParts), firstBytes);
    assert.deepEqual(firstBytes, expected(toChatParams(request({ messages: structuredClone(long) }), false)));
    // A list that shares only part of the first (a retried step) gets bytes of its own, and leaves the others' alone.
    const retried = [...long.slice(0, 120), ...turn(41)];
    deriveMessages(retried, next, 120);
    const retriedParts = chatBody(request({ messages: retried }), false);
    assert.notEqual(retriedParts[1]!.buffer, nextParts[1]!.buffer);
    assert.deepEqual(Buffer.concat(retriedParts), expected(toChatParams(request({ messages: structuredClone(retried) }), false)));
    assert.deepEqual(Buffer.concat(chatBody(request({ messages: next }), false)), Buffer.concat(nextParts));
  });

  test('a second list derived from the same one reuses the bytes the first appended, and copies nothing', () => {
    // The turn's view and the stored fold both extend the last step's list: without the reuse, the
    // second copied the whole history into a store of its own (and its entries kept the old one alive).
    const long = Array.from({ length: 40 }, (_, n) => turn(n)).flat();
    const baseParts = chatBody(request({ messages: long }), false);
    const view = [...long, ...turn(40)];
    deriveMessages(view, long, long.length);
    const viewParts = chatBody(request({ messages: view }), false);
    const stored = [...long, ...turn(40), ...turn(41)];
    deriveMessages(stored, long, long.length);
    const storedParts = chatBody(request({ messages: stored }), false);
    assert.equal(storedParts[1]!.buffer, baseParts[1]!.buffer, 'the same bytes, extended in place');
    assert.equal(viewParts[1]!.buffer, baseParts[1]!.buffer);
    assert.deepEqual(Buffer.concat(storedParts), expected(toChatParams(request({ messages: structuredClone(stored) }), false)));
    assert.deepEqual(Buffer.concat(viewParts), expected(toChatParams(request({ messages: structuredClone(view) }), false)));
    // A list whose next message differs from what the store holds there still gets bytes of its own.
    const other = [...long, ...turn(42)];
    deriveMessages(other, long, long.length);
    const otherParts = chatBody(request({ messages: other }), false);
    assert.notEqual(otherParts[1]!.buffer, baseParts[1]!.buffer);
    assert.deepEqual(Buffer.concat(otherParts), expected(toChatParams(request({ messages: structuredClone(other) }), false)));
    assert.deepEqual(Buffer.concat(chatBody(request({ messages: stored }), false)), Buffer.concat(storedParts));
  });

  test('the SDK sends the encoded body with the headers it gives the object body (auth, content type and length)', async () => {
    const client = createOpenAiClient({ api_key: 'test-key', base_url: `${fake.origin}/v1` });
    const req = request({ messages: histories()[1]!.messages });
    await (await postStreaming(client, '/responses', responsesBody(req))).text();
    const encoded = fake.requests.at(-1)!;
    await (await client.post('/responses', { body: toResponsesParams(req), stream: true }).asResponse()).text();
    const object = fake.requests.at(-1)!;
    assert.deepEqual(encoded.raw, object.raw);
    assert.equal(encoded.headers.authorization, 'Bearer test-key');
    assert.equal(encoded.headers['content-type'], 'application/json');
    assert.deepEqual(encoded.headers, object.headers);
  });

  test('undici gets the encoded body as its parts, not a copy of them (decisions 0109, 0113)', async () => {
    // What undici is asked to send, seen where it creates the request (its diagnostics channel).
    const bodies: unknown[] = [];
    const onCreate = (message: unknown) => bodies.push((message as { request: { body: unknown } }).request.body);
    diagnostics.subscribe('undici:request:create', onCreate);
    const req = request({ messages: histories()[1]!.messages });
    try {
      const provider = createLlmProvider({ provider_type: 'openai_completions', api_key: 'test-key', base_url: `${fake.origin}/v1` });
      await collect(provider.stream(req));
    } finally {
      diagnostics.unsubscribe('undici:request:create', onCreate);
    }
    assert.equal(bodies.length, 1);
    const parts = bodies[0] as Uint8Array[];
    assert.ok(Array.isArray(parts), `undici got ${Object.prototype.toString.call(bodies[0])}`);
    assert.ok(parts.every((part) => part instanceof Uint8Array));
    const received = fake.requests.at(-1)!;
    assert.deepEqual(Buffer.concat(parts), received.raw);
    assert.deepEqual(received.raw, expected(toChatParams(request({ messages: structuredClone(req.messages) }), false)));
    assert.equal(received.headers['content-length'], String(received.raw.length));
    assert.equal(received.headers['transfer-encoding'], undefined);
  });
});
