import type { Config } from '../config.js';
import type { Keyring } from '../crypto/index.js';
import type { Logger } from '../log.js';
import type { Store } from '../db/index.js';
import { createAccessTokens } from './access-tokens.js';
import { createAuthenticator } from './authenticator.js';
import { loadJwtSecret } from './jwt-secret.js';
import { createLoginThrottle } from './login-throttle.js';
import { availableParallelism } from 'node:os';
import { createPasswordHasher } from './passwords.js';
import { createPasswordHashQueue } from './password-hash-queue.js';
import { createPrincipalCache } from './principal-cache.js';
import { createRefreshTokens } from './refresh-tokens.js';

export interface AuthModuleDeps {
  config: Config;
  store: Store;
  log: Logger;
  /** Seals the stored JWT signing key. */
  keyring: Keyring;
}

/**
 * Everything authentication needs, built once in the composition root: the JWT key (config or
 * shared in the database), password hashing, access/stream tokens, refresh-token families, the
 * login throttle, the cache of recent credential checks and the request authenticator.
 */
export async function createAuthModule({ config, store, log, keyring }: AuthModuleDeps) {
  const secret = await loadJwtSecret({ store, keyring, configured: config.JWT_SECRET });
  if (secret.sealedNow) log.warn('the stored JWT signing key was in plain text; it is now sealed with the secrets keyring');
  log.info({ source: secret.source }, 'JWT signing key loaded');
  const tokens = createAccessTokens({
    store,
    key: secret.key,
    accessTtlS: config.ACCESS_TOKEN_TTL_S,
    streamTtlS: config.STREAM_TOKEN_TTL_S,
  });
  const refreshTokens = createRefreshTokens({ store, ttlS: config.REFRESH_TOKEN_TTL_S });
  const passwords = await createPasswordHasher(
    {},
    {
      queue: createPasswordHashQueue({
        // Unset: half the cores, so a flood of logins leaves the other half to everything else.
        concurrency: config.PASSWORD_HASH_CONCURRENCY ?? Math.max(1, Math.floor(availableParallelism() / 2)),
        queueMax: config.PASSWORD_HASH_QUEUE_MAX,
      }),
    },
  );
  const throttle = createLoginThrottle({
    maxPerEmail: config.LOGIN_MAX_ATTEMPTS_PER_EMAIL,
    maxPerIp: config.LOGIN_MAX_ATTEMPTS_PER_IP,
    maxRefreshPerIp: config.REFRESH_MAX_FAILURES_PER_IP,
    windowMs: config.LOGIN_THROTTLE_WINDOW_S * 1000,
  });
  const principals = createPrincipalCache({
    ttlMs: config.AUTH_CACHE_TTL_MS,
    maxEntries: config.AUTH_CACHE_MAX_ENTRIES,
    shared: store.kind === 'postgres',
  });
  const authenticate = createAuthenticator({ store, verifyJwt: tokens.verify, cache: principals });
  return { tokens, refreshTokens, passwords, throttle, principals, authenticate };
}

export type AuthModule = Awaited<ReturnType<typeof createAuthModule>>;
