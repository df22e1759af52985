import type { Route } from '../../http/index.js';
import type { TaskCountSource } from '../../observability/index.js';
import { prometheusRoutes, timeseriesRoutes } from './routes.js';

export interface MetricsModuleDeps {
  /** Task counts of every live instance (spec 4.5). */
  timeseries: TaskCountSource;
  /** The Prometheus text, when metrics are on. */
  scrape?: () => Promise<string>;
  token?: string;
}

export interface MetricsModule {
  /** `GET /v1/durable/metrics/timeseries`. */
  routes: Route[];
  /**
   * `/metrics`, served on the main port or on its own listener (METRICS_PORT): the composition
   * root decides where, so it is apart from `routes`. Empty without `scrape`.
   */
  prometheusRoutes: Route[];
}

export function createMetricsModule({ timeseries, scrape, token }: MetricsModuleDeps): MetricsModule {
  return {
    routes: timeseriesRoutes({ source: timeseries }),
    prometheusRoutes: scrape ? prometheusRoutes({ scrape, token }) : [],
  };
}
