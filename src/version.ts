import { readFileSync } from 'node:fs';
import { PACKAGE_ROOT } from './package-root.js';

/** The service version, from package.json (NATS micro service info, trace resource). */
export const SERVICE_VERSION: string = (JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as { version: string })
  .version;
