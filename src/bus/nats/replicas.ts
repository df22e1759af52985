import type { ServerInfo } from '@nats-io/nats-core';

/** The most replicas `auto` picks: R3 survives one lost node, more only costs write latency. */
export const MAX_AUTO_REPLICAS = 3;

/** `auto` or a fixed replica count (1-5, the JetStream maximum). */
export type ReplicasSetting = 'auto' | number;

export interface ReplicasChoice {
  replicas: number;
  /** Servers of the cluster as counted (1 when not clustered). */
  servers: number;
  /** Where `servers` came from: the server's INFO, the configured URLs, or no cluster at all. */
  counted: 'advertised' | 'configured_urls' | 'not_clustered';
  source: 'configured' | 'auto';
}

/**
 * The replica count for every stream and bucket. `auto` is min(3, servers of the cluster).
 * A server whose INFO names no `cluster` cannot place more than one replica. A clustered one
 * lists every server's client URL (itself included) in `connect_urls`; with `no_advertise`
 * that list is absent and the distinct URLs the service was given (NATS_URL) are counted
 * instead. Clusters where only some servers run JetStream overstate the count: set NATS_REPLICAS.
 */
export function chooseReplicas(
  setting: ReplicasSetting,
  info: Pick<ServerInfo, 'cluster' | 'connect_urls'> | undefined,
  configuredUrls: readonly string[],
): ReplicasChoice {
  const advertised = new Set(info?.connect_urls ?? []).size;
  const [servers, counted]: [number, ReplicasChoice['counted']] = !info?.cluster
    ? [1, 'not_clustered']
    : advertised > 0
      ? [advertised, 'advertised']
      : [Math.max(1, new Set(configuredUrls).size), 'configured_urls'];
  if (setting !== 'auto') {
    if (!Number.isInteger(setting) || setting < 1 || setting > 5) throw new RangeError('replicas must be an integer from 1 to 5');
    return { replicas: setting, servers, counted, source: 'configured' };
  }
  return { replicas: Math.min(MAX_AUTO_REPLICAS, servers), servers, counted, source: 'auto' };
}
