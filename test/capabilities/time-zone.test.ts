import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isValidTimeZone, parseDateTimeInZone, zoneOffsetMinutes, zonedTime } from '../../src/capabilities/time-zone.js';

describe('time zones', () => {
  it('knows IANA zones and refuses others', () => {
    assert.equal(isValidTimeZone('Europe/Paris'), true);
    assert.equal(isValidTimeZone('UTC'), true);
    assert.equal(isValidTimeZone('Not/AZone'), false);
    assert.equal(isValidTimeZone(''), false);
  });

  it('reads an instant in a zone, across DST', () => {
    assert.equal(zonedTime(new Date('2026-01-15T12:00:00Z'), 'Europe/Paris').iso, '2026-01-15T13:00:00+01:00');
    assert.equal(zonedTime(new Date('2026-07-15T12:00:00Z'), 'Europe/Paris').iso, '2026-07-15T14:00:00+02:00');
    assert.equal(zoneOffsetMinutes(new Date('2026-07-15T12:00:00Z'), 'America/Los_Angeles'), -420);
  });

  it('parses date-times with an offset as that instant', () => {
    assert.equal(parseDateTimeInZone('2026-05-01T09:00:00Z', 'Asia/Tokyo')!.toISOString(), '2026-05-01T09:00:00.000Z');
    assert.equal(parseDateTimeInZone('2026-05-01T09:00:00+02:00', 'UTC')!.toISOString(), '2026-05-01T07:00:00.000Z');
  });

  it('parses offset-less date-times as wall-clock time in the zone', () => {
    assert.equal(parseDateTimeInZone('2026-05-01T09:00:00', 'Europe/Paris')!.toISOString(), '2026-05-01T07:00:00.000Z');
    assert.equal(parseDateTimeInZone('2026-12-01T09:00', 'America/New_York')!.toISOString(), '2026-12-01T14:00:00.000Z');
    // 02:30 does not exist in Paris on 2026-03-29 (clocks jump 02:00 → 03:00): the later reading wins.
    assert.equal(parseDateTimeInZone('2026-03-29T02:30:00', 'Europe/Paris')!.toISOString(), '2026-03-29T01:30:00.000Z');
  });

  it('refuses malformed and impossible date-times', () => {
    assert.equal(parseDateTimeInZone('tomorrow at 9', 'UTC'), null);
    assert.equal(parseDateTimeInZone('2026-02-30T09:00:00', 'UTC'), null);
    assert.equal(parseDateTimeInZone('2026-13-01T09:00:00Z', 'UTC'), null);
    assert.equal(parseDateTimeInZone('2026-05-01', 'UTC'), null);
  });
});
