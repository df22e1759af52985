import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TestApp } from '../../helpers/app.js';
import { addCaller, adminOrgId, useSuiteApp } from '../agents/helpers.js';
import { createSession, listAll } from '../fs/helpers.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d3e70000000049454e44ae426082',
  'hex',
);

function form(parts: { name: string; value: string | Buffer; filename?: string; type?: string }[]): FormData {
  const fd = new FormData();
  for (const p of parts) {
    if (p.filename !== undefined) fd.append(p.name, new Blob([p.value], { type: p.type ?? 'application/octet-stream' }), p.filename);
    else fd.append(p.name, String(p.value));
  }
  return fd;
}

async function post(app: TestApp, fd: FormData, { key = app.adminKey, query = '' } = {}) {
  const res = await fetch(`${app.url}/v1/images${query}`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('POST /v1/images (multipart)', () => {
  const suiteApp = useSuiteApp();

  it('stores PNG/JPEG/GIF/WebP by magic bytes with an img_ id; GET returns the bytes; DELETE removes', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app, ['current_time']);
    const up = await post(
      app,
      form([
        { name: 'session_id', value: sessionId },
        { name: 'file', value: PNG, filename: 'dot.png', type: 'image/jpeg' },
      ]),
    );
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.match(up.body.id, /^img_[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(up.body).sort(), ['content_type', 'created_at', 'filename', 'id', 'session_id', 'size_bytes']);
    assert.equal(up.body.content_type, 'image/png', 'the type comes from the bytes, not the claim');
    assert.equal(up.body.filename, 'dot.png');
    assert.equal(up.body.size_bytes, PNG.length);

    const got = await fetch(`${app.url}/v1/images/${up.body.id}`, { headers: { authorization: `Bearer ${app.adminKey}` } });
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await got.arrayBuffer()), PNG);

    for (const [bytes, type] of [
      [Buffer.from('ffd8ffe000104a464946', 'hex'), 'image/jpeg'],
      [Buffer.from('GIF89a\x01\x00'), 'image/gif'],
      [Buffer.concat([Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ')]), 'image/webp'],
    ] as const) {
      const r = await post(app, form([{ name: 'file', value: bytes, filename: 'x' }]), { query: `?session_id=${sessionId}` });
      assert.equal(r.status, 201);
      assert.equal(r.body.content_type, type);
    }

    assert.equal((await app.request('DELETE', `/v1/images/${up.body.id}`)).status, 204);
    assert.equal((await app.request('GET', `/v1/images/${up.body.id}`)).status, 404);
  });

  it('refuses other formats (415), oversize files (413), missing fields (400), foreign sessions (403) and images (403)', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app, ['current_time']);
    assert.equal(
      (
        await post(
          app,
          form([
            { name: 'session_id', value: sessionId },
            { name: 'file', value: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), filename: 'a.png', type: 'image/png' },
          ]),
        )
      ).status,
      415,
    );
    const big = Buffer.concat([PNG, Buffer.alloc(10 * 1024 * 1024)]);
    assert.equal(
      (
        await post(
          app,
          form([
            { name: 'session_id', value: sessionId },
            { name: 'file', value: big, filename: 'big.png' },
          ]),
        )
      ).status,
      413,
    );
    assert.equal((await post(app, form([{ name: 'session_id', value: sessionId }]))).status, 400);
    assert.equal((await post(app, form([{ name: 'file', value: PNG, filename: 'a.png' }]))).status, 400);
    assert.equal(
      (
        await post(
          app,
          form([
            { name: 'session_id', value: '0190e0a0-0000-7000-8000-000000000000' },
            { name: 'file', value: PNG, filename: 'a.png' },
          ]),
        )
      ).status,
      404,
    );
    const notMultipart = await app.request('POST', '/v1/images', { body: { file: 'x' } });
    assert.equal(notMultipart.status, 400);

    const stranger = await addCaller(app);
    assert.equal(
      (
        await post(
          app,
          form([
            { name: 'session_id', value: sessionId },
            { name: 'file', value: PNG, filename: 'a.png' },
          ]),
          { key: stranger.key },
        )
      ).status,
      403,
    );
    const mine = await post(
      app,
      form([
        { name: 'session_id', value: sessionId },
        { name: 'file', value: PNG, filename: 'a.png' },
      ]),
    );
    assert.equal((await stranger.request('GET', `/v1/images/${mine.body.id}`)).status, 403);
    assert.equal((await stranger.request('DELETE', `/v1/images/${mine.body.id}`)).status, 403);
    assert.equal((await app.request('GET', '/v1/images/img_nothex')).status, 400);
  });

  it("a member cannot attach another user's image to a message (403); their own image works in their other session", async () => {
    const app = suiteApp();
    const adminSession = await createSession(app, ['current_time']);
    const adminImage = await post(
      app,
      form([
        { name: 'session_id', value: adminSession },
        { name: 'file', value: PNG, filename: 'a.png' },
      ]),
    );
    const member = await addCaller(app, { orgId: await adminOrgId(app) });
    const first = await createSession(app, ['current_time'], member.key);
    const second = await createSession(app, ['current_time'], member.key);
    const own = await post(
      app,
      form([
        { name: 'session_id', value: first },
        { name: 'file', value: PNG, filename: 'b.png' },
      ]),
      { key: member.key },
    );
    const send = (sessionId: string, imageId: string) =>
      member.request('POST', `/v1/sessions/${sessionId}/messages`, {
        body: {
          message: {
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_file', image_id: imageId },
            ],
          },
        },
      });
    const events = async () => (await member.request('GET', `/v1/sessions/${second}/events`)).body.data.length;
    const before = await events();
    const foreign = await send(second, adminImage.body.id);
    assert.equal(foreign.status, 403, foreign.text);
    assert.equal(await events(), before, 'nothing was appended');
    assert.equal((await send(second, own.body.id)).status, 201);
  });

  it('an image_file part reaches the turn (llmsim counts the image); deleting the session deletes its images', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app, ['current_time']);
    const up = await post(
      app,
      form([
        { name: 'session_id', value: sessionId },
        { name: 'file', value: PNG, filename: 'dot.png' },
      ]),
    );
    const sent = await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
      body: {
        message: {
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_file', image_id: up.body.id, filename: 'dot.png' },
          ],
        },
      },
    });
    assert.equal(sent.status, 201, sent.text);
    let reply: any;
    for (let i = 0; i < 200 && !reply; i++) {
      reply = (await listAll(app, sessionId)).find((e) => e.type === 'output.message.completed');
      if (!reply) await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(reply.data.message.content[0].text, /\[1 images?\]/);
    assert.equal((await app.request('DELETE', `/v1/sessions/${sessionId}`)).status, 204);
    const gone = await app.request('GET', `/v1/images/${up.body.id}`);
    assert.equal(gone.status, 404);
    assert.match(gone.body.error, /^Not found/);
  });
});
