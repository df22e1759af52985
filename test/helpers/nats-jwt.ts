import { nkeys } from '@nats-io/transport-node';

/**
 * A decentralised-auth NATS setup made in memory, as `nsc` would: an operator, one account with
 * JetStream, one user, and the user's .creds file. JWTs are `header.claims.signature`, signed
 * with ed25519 by the issuer's nkey.
 */
export interface TestOperator {
  /** nats-server config lines: operator JWT and a memory resolver preloaded with the account. */
  serverConfig: string;
  /** A user's .creds file (JWT + seed), with the given permissions (`pub`/`sub` allow lists). */
  userCreds(perms?: { pub?: string[]; sub?: string[] }): string;
}

const b64url = (s: string | Uint8Array) => Buffer.from(s).toString('base64url');
const text = (b: Uint8Array) => new TextDecoder().decode(b);

function sign(claims: Record<string, unknown>, issuer: ReturnType<typeof nkeys.createOperator>): string {
  const head = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const body = b64url(
    JSON.stringify({
      jti: b64url(crypto.getRandomValues(new Uint8Array(16))),
      iat: Math.floor(Date.now() / 1000),
      iss: issuer.getPublicKey(),
      ...claims,
    }),
  );
  return `${head}.${body}.${b64url(issuer.sign(new TextEncoder().encode(`${head}.${body}`)))}`;
}

export function createTestOperator(): TestOperator {
  const operator = nkeys.createOperator();
  const account = nkeys.createAccount();
  const operatorJwt = sign({ name: 'test-operator', sub: operator.getPublicKey(), nats: { type: 'operator', version: 2 } }, operator);
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetstream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const accountJwt = sign(
    { name: 'test-account', sub: account.getPublicKey(), nats: { limits: { ...unlimited, ...jetstream }, type: 'account', version: 2 } },
    operator,
  );
  // JetStream needs a system account to start in operator mode.
  const system = nkeys.createAccount();
  const systemJwt = sign({ name: 'SYS', sub: system.getPublicKey(), nats: { limits: unlimited, type: 'account', version: 2 } }, operator);
  return {
    serverConfig: [
      `operator: ${operatorJwt}`,
      `system_account: ${system.getPublicKey()}`,
      'resolver: MEMORY',
      `resolver_preload: { ${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt} }`,
    ].join('\n'),
    userCreds(perms = {}) {
      const user = nkeys.createUser();
      const allow = (list?: string[]) => (list ? { allow: list } : {});
      const jwt = sign(
        {
          name: 'test-user',
          sub: user.getPublicKey(),
          nats: { pub: allow(perms.pub), sub: allow(perms.sub), subs: -1, data: -1, payload: -1, type: 'user', version: 2 },
        },
        account,
      );
      return [
        '-----BEGIN NATS USER JWT-----',
        jwt,
        '------END NATS USER JWT------',
        '',
        '-----BEGIN USER NKEY SEED-----',
        text(user.getSeed()),
        '------END USER NKEY SEED------',
        '',
      ].join('\n');
    },
  };
}
