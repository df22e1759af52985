import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createKeyedChain } from '../../src/bus/keyed-chain.js';

it('keyed chain - settled resolves once the tasks queued for a key so far have finished, failed ones too', async () => {
  const chain = createKeyedChain();
  await chain.settled('idle');
  const done: string[] = [];
  let release!: () => void;
  void chain.run('k', () => new Promise<void>((r) => (release = r)).then(() => void done.push('first')));
  void chain.run('k', async () => void done.push('second'));
  void chain
    .run('k', async () => {
      throw new Error('failed');
    })
    .catch(() => undefined);
  const settled = chain.settled('k').then(() => done.push('settled'));
  await chain.settled('other');
  assert.deepEqual(done, []);
  release();
  await settled;
  assert.deepEqual(done, ['first', 'second', 'settled']);
});
