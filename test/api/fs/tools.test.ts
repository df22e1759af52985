import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useSuiteApp } from '../agents/helpers.js';
import { createSession, runTools, upload } from './helpers.js';

describe('file-system tools through real turns (llmsim)', () => {
  const suiteApp = useSuiteApp();

  it('write_file, read_file, edit_file, list_directory, grep_files, stat_file, copy_file, move_file, delete_file', async () => {
    const app = suiteApp();
    const id = await createSession(app);
    let [r] = await runTools(app, id, [['write_file', { path: '/workspace/notes/plan.md', content: 'step one\nstep two\n' }]]);
    assert.deepEqual(r!.result, { path: '/notes/plan.md', size_bytes: 18, created: true });
    assert.equal((await app.request('GET', `/v1/sessions/${id}/fs/notes/plan.md`)).text, 'step one\nstep two\n');

    [r] = await runTools(app, id, [['read_file', { path: '/notes/plan.md' }]]);
    assert.equal(r!.success, true);
    assert.equal(r!.result.total_lines, 3);

    [r] = await runTools(app, id, [['edit_file', { path: '/notes/plan.md', old_string: 'step two', new_string: 'step 2' }]]);
    assert.equal(r!.result.replacements, 1);
    assert.equal((await app.request('GET', `/v1/sessions/${id}/fs/notes/plan.md`)).text, 'step one\nstep 2\n');
    [r] = await runTools(app, id, [['edit_file', { path: '/notes/plan.md', old_string: 'step', new_string: 'x' }]]);
    assert.equal(r!.success, false);
    assert.match(r!.error!, /occurs 2 times/);

    const outcomes = await runTools(app, id, [
      ['list_directory', { path: '/', recursive: true }],
      ['grep_files', { pattern: 'step \\d' }],
      ['stat_file', { path: '/notes' }],
    ]);
    assert.deepEqual(
      outcomes[0]!.result.entries.map((e: any) => e.path),
      ['/notes', '/notes/plan.md'],
    );
    assert.equal(outcomes[1]!.result.results[0].matches[0].line, 'step 2');
    assert.equal(outcomes[2]!.result.is_directory, true);

    [r] = await runTools(app, id, [['copy_file', { src_path: '/notes', dst_path: '/backup' }]]);
    assert.equal(r!.result.dst_path, '/backup');
    [r] = await runTools(app, id, [['move_file', { src_path: '/backup/plan.md', dst_path: '/old.md' }]]);
    assert.equal(r!.success, true);
    [r] = await runTools(app, id, [['delete_file', { path: '/notes', recursive: true }]]);
    assert.deepEqual(r!.result, { path: '/notes', deleted: true, was_directory: true });
    const listing = await app.request('GET', `/v1/sessions/${id}/fs?recursive=true`);
    assert.deepEqual(
      listing.body.data.map((f: any) => f.path),
      ['/backup', '/old.md'],
    );
    assert.equal((await app.request('GET', `/v1/sessions/${id}/fs/old.md`)).text, 'step one\nstep 2\n');
  });

  it('tools see REST uploads; traversal stays inside; per-file limit and read-only files become tool errors', async () => {
    const app = suiteApp();
    const id = await createSession(app, [{ ref: 'session_file_system', config: { max_file_size: 10 } }]);
    await upload(app, id, 'in/data.txt', 'uploaded');
    const session = await app.app.services.storage.access.owned(
      { org_id: (await app.request('GET', `/v1/sessions/${id}`)).body.organization_id },
      id,
    );
    await app.app.services.storage.forSession(session).files.write('/ro.txt', new TextEncoder().encode('locked'), { readonly: true });
    const [read, escaped, big, locked, gone] = await runTools(app, id, [
      ['read_file', { path: 'in/data.txt' }],
      ['read_file', { path: '/../../etc/passwd' }],
      ['write_file', { path: '/big.txt', content: '01234567890' }],
      ['write_file', { path: '/ro.txt', content: 'x' }],
      ['delete_file', { path: '/ro.txt' }],
    ]);
    assert.equal(read!.success, true);
    assert.equal(escaped!.success, false);
    assert.match(escaped!.error!, /outside the workspace/);
    assert.equal(big!.success, false);
    assert.match(big!.error!, /maximum file size is 10 bytes/);
    assert.equal(locked!.success, false);
    assert.match(locked!.error!, /read-only/);
    assert.equal(gone!.success, false);
    assert.equal((await app.request('GET', `/v1/sessions/${id}/fs/ro.txt`)).text, 'locked');
  });
});
