import { readFileSync } from 'node:fs';

/** The service version, from package.json (NATS micro service info, trace resource). */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
