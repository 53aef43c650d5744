// Certificates made at test time: a CA and leaves it signs, written as PEM files
// in a directory, for webhook servers and proxies started by the tests.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCa, issueLeaf, loadCa, type IssuedPem, type KeyPair } from '../../internal/pki/certs.js';

export interface PemFiles {
  cert: string;
  key: string;
  certPem: string;
  keyPem: string;
}

export class TestCa {
  private constructor(readonly dir: string, readonly name: string, private readonly ca: KeyPair, readonly files: PemFiles) {}

  /** A new CA named `name`, its files `<dir>/<name>.crt` and `.key`. */
  static async create(dir: string, name: string): Promise<TestCa> {
    const pem = await createCa(name, 30);
    return new TestCa(dir, name, await loadCa(pem.certPem, pem.keyPem), write(dir, name, pem));
  }

  /** A client certificate (common name, organizations as groups). */
  async client(commonName: string, organizations: string[] = []): Promise<PemFiles> {
    return write(this.dir, `${this.name}-${commonName}`, await issueLeaf(this.ca, { commonName, organizations, usage: 'client', validityDays: 30 }));
  }

  /** A serving certificate for the loopback address. */
  async server(commonName: string): Promise<PemFiles> {
    return write(this.dir, `${this.name}-${commonName}`, await issueLeaf(this.ca, { commonName, hosts: ['127.0.0.1'], usage: 'server', validityDays: 30 }));
  }
}

function write(dir: string, base: string, pem: IssuedPem): PemFiles {
  const files = { cert: join(dir, `${base}.crt`), key: join(dir, `${base}.key`), certPem: pem.certPem, keyPem: pem.keyPem };
  writeFileSync(files.cert, pem.certPem);
  writeFileSync(files.key, pem.keyPem, { mode: 0o600 });
  return files;
}
