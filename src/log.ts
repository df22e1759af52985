import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Paths whose values never reach a log line: credentials, keys, passwords, tokens, secrets. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  '*.authorization',
  '*.password',
  '*.api_key',
  '*.apiKey',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.secret',
  '*.secrets',
  '*.value',
  'password',
  'api_key',
  'token',
  'access_token',
  'refresh_token',
  'secret',
];

/** Query parameters whose values are replaced before a URL is logged. */
const SECRET_QUERY_KEYS = /([?&](?:access_token|token|api_key|key)=)[^&#]*/gi;

/** A URL safe to log: credential-bearing query values are replaced by `[REDACTED]`. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_KEYS, '$1[REDACTED]');
}

/** Creates the root logger; every other logger is a child of it (style rule 25). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}
