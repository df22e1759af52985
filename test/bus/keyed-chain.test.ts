import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createKeyedChain } from '../../src/bus/keyed-chain.js';

it('keyed chain - runs a key’s tasks in call order, a failed one does not stop those behind it, other keys run meanwhile', async () => {
  const chain = createKeyedChain();
  const done: string[] = [];
  let release!: () => void;
  void chain.run('k', () => new Promise<void>((r) => (release = r)).then(() => void done.push('first')));
  void chain.run('k', async () => void done.push('second'));
  const failed = chain.run('k', async () => {
    throw new Error('failed');
  });
  const last = chain.run('k', async () => void done.push('last'));
  await chain.run('other', async () => void done.push('other'));
  assert.deepEqual(done, ['other']);
  await new Promise((r) => setImmediate(r));
  assert.equal(chain.size, 1, 'only k has work queued');
  release();
  await assert.rejects(failed, /failed/);
  await last;
  assert.deepEqual(done, ['other', 'first', 'second', 'last']);
  await new Promise((r) => setImmediate(r));
  assert.equal(chain.size, 0);
});
