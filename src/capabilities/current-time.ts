import { Type } from '@sinclair/typebox';
import { defineCapability, defineTool, jsonResult } from './define.js';
import { isValidTimeZone, zonedTime } from './time-zone.js';
import { ToolError, type CapabilityConfig } from './types.js';

export const CURRENT_TIME_ID = 'current_time';
export const DEFAULT_TIME_ZONE = 'UTC';

export const CurrentTimeConfig = Type.Object(
  {
    default_timezone: Type.Optional(
      Type.String({ format: 'iana-timezone', maxLength: 64, description: 'Zone used when the call names none (default UTC).' }),
    ),
  },
  { additionalProperties: false },
);

/** The zone a call without `timezone` uses: config `default_timezone`, else UTC. */
export function defaultTimeZone(config: CapabilityConfig): string {
  const zone = config['default_timezone'];
  return typeof zone === 'string' && zone !== '' ? zone : DEFAULT_TIME_ZONE;
}

const getCurrentTime = defineTool({
  name: 'get_current_time',
  display_name: 'Get Current Time',
  description:
    'Returns the current date and time: UTC, unix seconds, and the local time, date, weekday and UTC offset in an IANA time zone.',
  parameters: Type.Object(
    {
      timezone: Type.Optional(
        Type.String({ maxLength: 64, description: 'IANA time zone, e.g. "Europe/Paris" or "America/New_York". Default: UTC.' }),
      ),
    },
    { additionalProperties: false },
  ),
  async run(args, ctx) {
    const zone = args.timezone?.trim() || defaultTimeZone(ctx.config);
    if (!isValidTimeZone(zone)) {
      throw new ToolError(`Unknown time zone "${zone}". Use an IANA name such as "Europe/Paris" or "UTC".`);
    }
    const now = ctx.now();
    return jsonResult({ utc: now.toISOString(), unix: Math.floor(now.getTime() / 1000), ...zonedTime(now, zone) });
  },
});

export const currentTimeCapability = defineCapability({
  id: CURRENT_TIME_ID,
  name: 'Current Time',
  description: 'Lets the agent read the current date and time in any IANA time zone.',
  prompt:
    "You cannot know the current date or time on your own. Call `get_current_time` (optionally with an IANA `timezone`) whenever the answer depends on today's date or the time of day; never guess.",
  tools: [getCurrentTime],
  configSchema: CurrentTimeConfig,
});
