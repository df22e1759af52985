import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TestApp } from '../../helpers/app.js';
import { useSuiteApp } from '../agents/helpers.js';
import { createSession } from '../fs/helpers.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d3e70000000049454e44ae426082',
  'hex',
);

async function postRaw(app: TestApp, body: string | Buffer, contentType: string) {
  const res = await fetch(`${app.url}/v1/images`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${app.adminKey}`, 'content-type': contentType },
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

/** A body with one file part for `sessionId`, framed with `boundary`. */
function upload(boundary: string, sessionId: string): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="session_id"\r\n\r\n${sessionId}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    PNG,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

describe('POST /v1/images - malformed multipart shapes', () => {
  const suiteApp = useSuiteApp();

  it('a part without a name, with an empty name or without Content-Disposition is a 400, not a 500', async () => {
    const app = suiteApp();
    const ct = 'multipart/form-data; boundary=b';
    const shapes = {
      'no name': '--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n',
      'empty name': '--b\r\nContent-Disposition: form-data; name=""\r\n\r\nx\r\n--b--\r\n',
      'only a file name': '--b\r\nContent-Disposition: form-data; filename="f.png"\r\n\r\nx\r\n--b--\r\n',
      'no Content-Disposition': '--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--\r\n',
      'no headers': '--b\r\n\r\nx\r\n--b--\r\n',
      'a header without a colon': '--b\r\nContent-Disposition\r\n\r\nx\r\n--b--\r\n',
      'an unterminated quote': '--b\r\nContent-Disposition: form-data; name="a\r\n\r\nx\r\n--b--\r\n',
    };
    for (const [shape, body] of Object.entries(shapes)) {
      const r = await postRaw(app, body, ct);
      assert.equal(r.status, 400, `${shape}: ${r.text}`);
      assert.deepEqual(Object.keys(r.body).sort(), ['error', 'status'], shape);
    }
    const noName = await postRaw(app, shapes['no name'], ct);
    assert.match(noName.body.error, /needs a Content-Disposition: form-data header with a name/);
  });

  it('bodies that do not split and content types whose boundary does not parse are 400s', async () => {
    const app = suiteApp();
    const part = '--b\r\nContent-Disposition: form-data; name="file"\r\n\r\nx\r\n--b--\r\n';
    const cases: [string, string][] = [
      ['unterminated body', '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx'],
      ['LF-only framing', '--b\nContent-Disposition: form-data; name="a"\n\nx\n--b--\n'],
      ['empty body', ''],
      ['closing delimiter only', '--b--\r\n'],
      ['not multipart at all', 'hello'],
    ];
    for (const [shape, body] of cases) {
      const r = await postRaw(app, body, 'multipart/form-data; boundary=b');
      assert.equal(r.status, 400, `${shape}: ${r.text}`);
    }
    for (const ct of [
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary=""',
      `multipart/form-data; boundary=${'b'.repeat(71)}`,
      'multipart/form-data; boundary=b; boundary=c',
      'multipart/form-data; boundary="b',
      'multipart/form-dataX; boundary=b',
      'multipart/mixed; boundary=b',
    ]) {
      const r = await postRaw(app, part, ct);
      assert.equal(r.status, 400, `${ct}: ${r.text}`);
      assert.match(r.body.error, /expected multipart\/form-data with a boundary/, ct);
    }
  });

  it('a quoted boundary and parameters after the boundary are read as RFC 7578 writes them (201)', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app, ['current_time']);
    for (const [ct, boundary] of [
      ['multipart/form-data; boundary="quoted b"', 'quoted b'],
      ['multipart/form-data; boundary=plain; charset=utf-8', 'plain'],
      ['multipart/form-data; x="boundary=decoy"; boundary=real', 'real'],
    ] as const) {
      const r = await postRaw(app, upload(boundary, sessionId), ct);
      assert.equal(r.status, 201, `${ct}: ${r.text}`);
      assert.equal(r.body.content_type, 'image/png');
    }
  });

  it('the part limit counts with the boundary that splits the body, not a decoy in another parameter', async () => {
    const app = suiteApp();
    const body = `${'--q\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n'.repeat(100)}--q--\r\n`;
    const r = await postRaw(app, body, 'multipart/form-data; x="boundary=z"; boundary=q');
    assert.equal(r.status, 400);
    assert.match(r.body.error, /at most 32 parts/);
  });
});
