export { createAuthenticator, createApiKeyVerifier } from './authenticator.js';
export type { TokenVerifier, AuthenticatorDeps } from './authenticator.js';
export { ensureBootstrapAdmin } from './bootstrap.js';
export { hashApiKey, generateApiKey, displayPrefix, API_KEY_PREFIX } from './api-key.js';
export { parseAuthorization, looksLikeJwt } from './credentials.js';
