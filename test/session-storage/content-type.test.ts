import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guessContentType } from '../../src/session-storage/content-type.js';

const text = new TextEncoder().encode('hello\n');
const binary = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x00, 0xff);

describe('guessContentType', () => {
  it('names text types by extension with their charset, other types bare', () => {
    assert.equal(guessContentType('/notes/a.md', text), 'text/markdown; charset=utf-8');
    assert.equal(guessContentType('/a.CSV', text), 'text/csv; charset=utf-8');
    assert.equal(guessContentType('/a.json', text), 'application/json');
    assert.equal(guessContentType('/img/b.png', binary), 'image/png');
    assert.equal(guessContentType('/b.svg', text), 'image/svg+xml');
  });

  it('knows the registry beyond a short table (wasm, webm, toml)', () => {
    assert.equal(guessContentType('/m.wasm', binary), 'application/wasm');
    assert.equal(guessContentType('/v.webm', binary), 'video/webm');
    assert.equal(guessContentType('/c.toml', text), 'application/toml');
  });

  it('keeps source files as text where the registry means another medium (.ts is not MPEG video)', () => {
    assert.equal(guessContentType('/src/x.ts', text), 'text/plain; charset=utf-8');
    assert.equal(guessContentType('/x.py', text), 'text/x-python; charset=utf-8');
    assert.equal(guessContentType('/x.yaml', text), 'application/yaml');
  });

  it('sniffs files without a known extension: UTF-8 is text, NUL or invalid bytes are binary', () => {
    assert.equal(guessContentType('/README', text), 'text/plain; charset=utf-8');
    assert.equal(guessContentType('/dir.d/blob', binary), 'application/octet-stream');
    assert.equal(guessContentType('/x.unknownext', Uint8Array.of(0xc3)), 'application/octet-stream');
  });
});
