/** The web console's address for the start-up messages (a wildcard host shown as localhost). */
export function consoleUrlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}/console`;
}
