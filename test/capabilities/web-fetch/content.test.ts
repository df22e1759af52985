import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderBody } from '../../../src/capabilities/web-fetch/content.js';

const html = '<!doctype html><html><head><style>p{}</style></head><body><h2>Title</h2><ul><li>one</li><li>two</li></ul></body></html>';

describe('renderBody', () => {
  it('renders HTML as Markdown, text or raw', async () => {
    assert.deepEqual(await renderBody(Buffer.from(html), 'text/html', 'markdown'), { kind: 'html', content: '## Title\n\n* one\n* two' });
    assert.deepEqual(await renderBody(Buffer.from(html), 'text/html', 'text'), { kind: 'html', content: 'Title\none\ntwo' });
    assert.equal((await renderBody(Buffer.from(html), 'text/html', 'raw')).content, html);
  });

  it('returns other text types as they are, decoding the charset', async () => {
    assert.deepEqual(await renderBody(Buffer.from('{"a":1}'), 'application/json', 'markdown'), { kind: 'text', content: '{"a":1}' });
    assert.deepEqual(await renderBody(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset=iso-8859-1', 'markdown'), {
      kind: 'text',
      content: 'café',
    });
    assert.equal((await renderBody(Buffer.from('<feed/>'), 'application/atom+xml', 'markdown')).kind, 'text');
  });

  it('sniffs missing content types and hides binary bodies', async () => {
    assert.equal((await renderBody(Buffer.from(html), undefined, 'markdown')).kind, 'html');
    assert.deepEqual(await renderBody(Buffer.from('hello'), undefined, 'markdown'), { kind: 'text', content: 'hello' });
    assert.deepEqual(await renderBody(Buffer.from([1, 0, 2]), undefined, 'markdown'), { kind: 'binary', content: null });
    assert.deepEqual(await renderBody(Buffer.from('PK'), 'application/zip', 'markdown'), { kind: 'binary', content: null });
  });
});
