import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { currentTimeCapability } from '../../src/capabilities/current-time.js';
import { ToolError } from '../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from './fakes.js';

const tool = toolOf(currentTimeCapability, 'get_current_time');
const at = new Date('2026-07-15T10:20:30.456Z');

describe('get_current_time', () => {
  it('returns UTC by default, from the context clock', async () => {
    const out = jsonOf(await tool.execute({}, createFakeToolContext({ now: () => at })));
    assert.deepEqual(out, {
      utc: '2026-07-15T10:20:30.456Z',
      unix: 1784110830,
      timezone: 'UTC',
      iso: '2026-07-15T10:20:30+00:00',
      date: '2026-07-15',
      time: '10:20:30',
      day_of_week: 'Wednesday',
      utc_offset: '+00:00',
    });
  });

  it('honours an IANA timezone argument', async () => {
    const out = jsonOf(await tool.execute({ timezone: 'America/New_York' }, createFakeToolContext({ now: () => at })));
    assert.equal(out['iso'], '2026-07-15T06:20:30-04:00');
    assert.equal(out['timezone'], 'America/New_York');
    const india = jsonOf(await tool.execute({ timezone: 'Asia/Kolkata' }, createFakeToolContext({ now: () => at })));
    assert.equal(india['utc_offset'], '+05:30');
    assert.equal(india['time'], '15:50:30');
  });

  it('uses the configured default_timezone when no argument is given', async () => {
    const out = jsonOf(await tool.execute({}, createFakeToolContext({ now: () => at, config: { default_timezone: 'Europe/Paris' } })));
    assert.equal(out['iso'], '2026-07-15T12:20:30+02:00');
  });

  it('refuses an unknown zone with a ToolError', async () => {
    await assert.rejects(tool.execute({ timezone: 'Mars/Olympus' }, createFakeToolContext()), (err: unknown) => {
      return err instanceof ToolError && /Unknown time zone "Mars\/Olympus"/.test(err.message);
    });
  });

  it('refuses unexpected arguments', async () => {
    await assert.rejects(tool.execute({ tz: 'UTC' }, createFakeToolContext()), /"tz" is not a known parameter/);
  });
});
