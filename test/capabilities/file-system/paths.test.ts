import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeEntryPath, normalizeSessionPath } from '../../../src/capabilities/file-system/paths.js';
import { ToolError } from '../../../src/capabilities/types.js';

describe('normalizeSessionPath', () => {
  it('normalises absolute, relative and /workspace paths to one form', () => {
    assert.equal(normalizeSessionPath('/notes/plan.md'), '/notes/plan.md');
    assert.equal(normalizeSessionPath('notes/plan.md'), '/notes/plan.md');
    assert.equal(normalizeSessionPath('/workspace/notes/plan.md'), '/notes/plan.md');
    assert.equal(normalizeSessionPath('/workspace'), '/');
    assert.equal(normalizeSessionPath('/workspace/'), '/');
    assert.equal(normalizeSessionPath('//a///b/./c/'), '/a/b/c');
    assert.equal(normalizeSessionPath('/a/b/../c'), '/a/c');
    assert.equal(normalizeSessionPath('/'), '/');
    assert.equal(normalizeSessionPath('/workspaces/x'), '/workspaces/x');
  });

  it('refuses escapes above the root, empty paths and control characters', () => {
    const refuses = (p: string, re: RegExp) =>
      assert.throws(
        () => normalizeSessionPath(p),
        (e: unknown) => e instanceof ToolError && re.test(e.message),
      );
    refuses('/../etc/passwd', /outside the workspace/);
    refuses('a/../../b', /outside the workspace/);
    refuses('/workspace/..', /outside the workspace/);
    refuses('   ', /must not be empty/);
    refuses('/a\u0000b', /control characters/);
    refuses('/' + 'x'.repeat(1100), /longer than 1024/);
    refuses('/' + 'x'.repeat(300), /segment is longer/);
  });

  it('normalizeEntryPath refuses the root', () => {
    assert.equal(normalizeEntryPath('/a'), '/a');
    assert.throws(() => normalizeEntryPath('/workspace'), /not the workspace root/);
  });
});
