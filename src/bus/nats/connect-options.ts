import { readFile } from 'node:fs/promises';
import { credsAuthenticator, nkeyAuthenticator, nkeys, type NodeConnectionOptions } from '@nats-io/transport-node';
import { parseNatsUrl } from './nats-url.js';

/** How the service proves itself to NATS beyond the URL (which may carry user:pass or a token). */
export interface NatsAuthOptions {
  /** Path of a `.creds` file (user JWT + nkey seed), as `nsc` writes it (NATS_CREDS). */
  credsFile?: string;
  /** A user nkey seed (`SU…`), or the path of a file holding one (NATS_NKEY_SEED). */
  nkeySeed?: string;
  /** TLS: the CA that signed the servers' certificates, and this client's certificate and key (NATS_TLS_*). */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

/** The connect options that authenticate; `servers` are the URLs without credentials. */
export type NatsAuthConnectOptions = Pick<NodeConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator' | 'tls'> & {
  servers: string[];
};

/** A user nkey seed: `S`, the user prefix `U`, then base32 (58 characters in all). */
const USER_SEED = /^SU[A-Z2-7]{56}$/;
/** Any seed, or a mistyped one: never read as a path (an error would print it). */
const SEED_LIKE = /^S[A-Z2-7]{10,}$/;

/**
 * Builds the nats.js options for NATS_URL plus NATS_CREDS / NATS_NKEY_SEED / NATS_TLS_*:
 * credentials found in the URL become `user`/`pass` or `token`, the creds file a
 * `credsAuthenticator`, the seed an `nkeyAuthenticator`; a `tls://` server or any TLS file
 * requires TLS for every server. Files are read now, so a missing or malformed one stops the
 * start with its setting's name; TLS files are read again by nats.js on every (re)connect,
 * which picks up rotated certificates. Error messages name settings and paths, never secrets.
 */
export async function natsConnectOptions(url: string, auth: NatsAuthOptions = {}): Promise<NatsAuthConnectOptions> {
  const parsed = parseNatsUrl(url);
  const out: NatsAuthConnectOptions = { servers: parsed.servers };
  const methods = [
    parsed.credentials && 'credentials in NATS_URL',
    auth.credsFile && 'NATS_CREDS',
    auth.nkeySeed && 'NATS_NKEY_SEED',
  ].filter(Boolean);
  if (methods.length > 1) throw new Error(`NATS authentication: use one of ${methods.join(', ')}, not several`);
  if (parsed.credentials?.kind === 'user') Object.assign(out, { user: parsed.credentials.user, pass: parsed.credentials.pass });
  if (parsed.credentials?.kind === 'token') out.token = parsed.credentials.token;
  if (auth.credsFile) {
    const creds = await readSetting('NATS_CREDS', auth.credsFile);
    if (!/-----BEGIN NATS USER JWT-----/.test(creds.toString()) || !/-----BEGIN USER NKEY SEED-----/.test(creds.toString())) {
      throw new Error(`NATS_CREDS: ${auth.credsFile} is not a .creds file (user JWT and nkey seed)`);
    }
    out.authenticator = credsAuthenticator(creds);
  }
  if (auth.nkeySeed) out.authenticator = nkeyAuthenticator(await userSeed(auth.nkeySeed));
  const tls = auth.tls ?? {};
  if (Boolean(tls.certFile) !== Boolean(tls.keyFile)) throw new Error('NATS TLS: NATS_TLS_CERT and NATS_TLS_KEY go together');
  if (parsed.tls || tls.caFile || tls.certFile) {
    for (const [setting, path] of [
      ['NATS_TLS_CA', tls.caFile],
      ['NATS_TLS_CERT', tls.certFile],
      ['NATS_TLS_KEY', tls.keyFile],
    ] as const) {
      if (path) await readSetting(setting, path);
    }
    out.tls = { ...(tls.caFile ? { caFile: tls.caFile } : {}), ...(tls.certFile ? { certFile: tls.certFile, keyFile: tls.keyFile } : {}) };
  }
  return out;
}

/** The seed itself, or the contents of the file it names; checked to be a user seed. */
async function userSeed(value: string): Promise<Uint8Array> {
  const invalid = new Error('NATS_NKEY_SEED: not a user nkey seed (SU…) nor a file holding one');
  const seed = SEED_LIKE.test(value.trim()) ? value.trim() : (await readSetting('NATS_NKEY_SEED', value)).toString().trim();
  if (!USER_SEED.test(seed)) throw invalid;
  const bytes = new TextEncoder().encode(seed);
  try {
    nkeys.fromSeed(bytes); // checks the checksum
  } catch {
    throw invalid;
  }
  return bytes;
}

async function readSetting(setting: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new Error(`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
