import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** PEM files of a throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate. */
export interface TestPki {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

function openssl(cwd: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.error?.message ?? r.stderr}`);
}

/** Signs a fresh P-256 key for `name` with the CA in `dir`; `ext` are the X.509 v3 extensions. */
function issue(dir: string, name: string, ext: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
  ]);
}

/** Creates the CA and both certificates in `dir` with the openssl CLI (EC keys: a few ms each). */
export function createTestPki(dir: string): TestPki {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
  ]);
  issue(dir, 'server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  issue(dir, 'client', 'extendedKeyUsage=clientAuth\n');
  return {
    caFile: join(dir, 'ca.pem'),
    serverCertFile: join(dir, 'server.pem'),
    serverKeyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.pem'),
    clientKeyFile: join(dir, 'client.key'),
  };
}
