/** The service's connections on one nats-server, read from its monitoring endpoint (`/connz`). */

/** Every service connection's name starts with this, then the instance's INSTANCE_ID (src/app/infrastructure.ts). */
export const SERVICE_CONNECTION_PREFIX = 'agent-session-service/';

export interface ServiceConnection {
  /** The INSTANCE_ID the connection's name carries. */
  instance: string;
  in_msgs: number;
  out_msgs: number;
}

/** The service's connections on the server at `monitorUrl`; null when the endpoint does not answer. */
export async function serviceConnections(monitorUrl: string): Promise<ServiceConnection[] | null> {
  const res = await fetch(`${monitorUrl}/connz?limit=1024`).catch(() => null);
  if (!res?.ok) return null;
  const { connections = [] } = (await res.json()) as { connections?: { name?: string; in_msgs: number; out_msgs: number }[] };
  return connections.flatMap(({ name, in_msgs, out_msgs }) =>
    name?.startsWith(SERVICE_CONNECTION_PREFIX) ? [{ instance: name.slice(SERVICE_CONNECTION_PREFIX.length), in_msgs, out_msgs }] : [],
  );
}
