/** Prefix of the service's own metric names (process and Node.js metrics keep prom-client's standard names). */
export const METRIC_PREFIX = 'agent_session_';
