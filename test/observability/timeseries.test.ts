import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTimeseries, localTaskCountSource, TaskCounts, type TaskCountSource } from '../../src/observability/index.js';

const MIN = 60_000;

describe('timeseries buckets (pure)', () => {
  it('counts per minute, sums minutes into aligned intervals, zeros included, the last interval in progress', async () => {
    let now = 1_000 * MIN + 30_000; // 30 s into minute 1000
    const counts = new TaskCounts(() => now);
    counts.record('task_claimed');
    now -= 7 * MIN; // minute 993
    counts.record('task_claimed');
    counts.record('task_completed');
    now = 1_000 * MIN + 45_000;
    const source = localTaskCountSource('i1', counts);

    const perMinute = await buildTimeseries(source, now, 60, 600);
    assert.equal(perMinute.instance_count, undefined);
    assert.deepEqual(
      perMinute.metrics.task_claimed.map((p) => p.count),
      [0, 0, 1, 0, 0, 0, 0, 0, 0, 1],
    );
    assert.equal(perMinute.metrics.task_claimed.at(-1)!.timestamp, new Date(1_000 * MIN).toISOString());

    // 5-minute buckets: [990, 995) holds minute 993, [995, 1000) nothing, [1000, 1005) minute 1000.
    const fiveMin = await buildTimeseries(source, now, 300, 900);
    assert.deepEqual(
      fiveMin.metrics.task_claimed.map((p) => [p.timestamp, p.count]),
      [
        [new Date(990 * MIN).toISOString(), 1],
        [new Date(995 * MIN).toISOString(), 0],
        [new Date(1_000 * MIN).toISOString(), 1],
      ],
    );
    assert.deepEqual(
      fiveMin.metrics.task_completed.map((p) => p.count),
      [1, 0, 0],
    );
  });

  it('a minute older than the retention is forgotten when its slot is reused', () => {
    let now = 5 * MIN;
    const counts = new TaskCounts(() => now);
    counts.record('task_claimed');
    now += 1441 * MIN; // the same ring slot, a day and a minute later
    counts.record('task_completed');
    assert.equal(counts.at('task_claimed', 5), 0);
    assert.equal(counts.at('task_claimed', 5 + 1441), 0);
    assert.equal(counts.at('task_completed', 5 + 1441), 1);
  });

  it('several instances: instance_count, points ordered by instance then time; pending counts survive a failed flush', async () => {
    const source: TaskCountSource = {
      async read() {
        return new Map([
          ['b', new Map([[1000, { task_claimed: 2, task_completed: 1 }]])],
          ['a', new Map()],
        ]);
      },
    };
    const ts = await buildTimeseries(source, 1_000 * MIN, 60, 120);
    assert.equal(ts.instance_count, 2);
    assert.deepEqual(
      ts.metrics.task_claimed.map((p) => `${p.instance_id}:${p.count}`),
      ['a:0', 'a:0', 'b:0', 'b:2'],
    );

    const counts = new TaskCounts(() => 7 * MIN);
    counts.record('task_claimed');
    const taken = counts.takePending();
    assert.deepEqual(counts.takePending(), []);
    counts.record('task_claimed');
    counts.restore(taken);
    assert.deepEqual(counts.takePending(), [{ minute: 7, task_claimed: 2, task_completed: 0 }]);
  });
});
