import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.js';

/** `GET /v1/durable/metrics/timeseries` query: bucket size and how far back (both in seconds). */
export const TimeseriesQuery = Type.Object(
  {
    interval_seconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 3600,
        multipleOf: 60,
        default: 60,
        description: 'Length of one point in seconds: a whole number of minutes, 1 to 60 (default 60).',
      }),
    ),
    window_seconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 86_400,
        multipleOf: 60,
        default: 3600,
        description:
          'How far back the series reaches, in seconds: a multiple of interval_seconds, up to 24 hours (default 3600). The last point is the interval in progress.',
      }),
    ),
  },
  { additionalProperties: false },
);

export type TimeseriesQueryInput = Static<typeof TimeseriesQuery>;

/** One interval of one instance. */
export const TimeseriesPoint = Type.Object(
  {
    instance_id: Type.String({ description: 'The instance (INSTANCE_ID, else `<hostname>-<pid>`).' }),
    timestamp: { ...Timestamp, description: 'Start of the interval (UTC, aligned to a multiple of interval_seconds since the epoch).' },
    count: Type.Integer({ minimum: 0, description: 'Events of the metric on that instance within the interval.' }),
  },
  { $id: 'TimeseriesPoint', additionalProperties: false },
);

/** Spec 4.5: per-instance task metrics. */
export const Timeseries = Type.Object(
  {
    instance_count: Type.Optional(Type.Integer({ minimum: 2, description: 'Live instances covered; present when more than 1.' })),
    metrics: Type.Object(
      {
        task_claimed: Type.Array(Type.Ref('TimeseriesPoint'), {
          description: 'Turn jobs claimed from the queue (redeliveries included), per instance and interval.',
        }),
        task_completed: Type.Array(Type.Ref('TimeseriesPoint'), {
          description: 'Claimed turn jobs settled as done (acknowledged), per instance and interval.',
        }),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'Timeseries',
    additionalProperties: false,
    description: 'One point per live instance and interval (zeros included), ordered by instance_id, then timestamp.',
  },
);

export const metricsSchemas = [TimeseriesPoint, Timeseries];
