export { createObservability } from './observability.js';
export type { LateSources, Observability, ObservabilityDeps, ObservabilityOptions } from './observability.js';
export { instrumentBus } from './instrumented-bus.js';
export type { BusObserver } from './instrumented-bus.js';
export { buildTimeseries, localTaskCountSource, DEFAULT_TIMESERIES_INTERVAL_S, DEFAULT_TIMESERIES_WINDOW_S } from './timeseries.js';
export type { Timeseries, TimeseriesPoint, TaskCountSource, InstanceMinutes } from './timeseries.js';
export { TaskCounts, TASK_METRICS, TIMESERIES_RETENTION_MINUTES } from './task-counts.js';
export type { TaskMetric, MinuteCounts } from './task-counts.js';
export { METRIC_PREFIX } from './names.js';
