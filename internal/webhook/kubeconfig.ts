// Webhook configuration files in the client configuration (kubeconfig) format:
// the current context names the cluster (the remote service: `server`,
// `certificate-authority` or `-data`) and the user (the server's own
// credentials: `client-certificate`/`client-key` or `-data`, or `token`).
// Relative file paths resolve against the configuration file's directory.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import YAML from 'yaml';

/** Where and how to call a webhook. */
export interface WebhookEndpoint {
  url: URL;
  /** PEM CAs of the service's certificate; undefined: the system's roots. */
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** A bearer token sent to the service. */
  token?: string;
  insecureSkipTlsVerify: boolean;
  /** The name the service's certificate must hold, when `url` names an address instead (a service reference resolved). */
  serverName?: string;
}

export class KubeconfigError extends Error {}

type Entry = Record<string, unknown>;
const asEntry = (v: unknown): Entry => (v && typeof v === 'object' && !Array.isArray(v) ? v as Entry : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function named(list: unknown, name: string, what: string, field: string): Entry {
  const found = (Array.isArray(list) ? list : []).map(asEntry).find((e) => e.name === name);
  if (!found) throw new KubeconfigError(`${what} "${name}" not found`);
  return asEntry(found[field]);
}

/** The context in use: current-context, or the only one there is. */
function currentContext(doc: Entry): Entry {
  const current = str(doc['current-context']);
  if (current) return named(doc.contexts, current, 'context', 'context');
  const contexts = Array.isArray(doc.contexts) ? doc.contexts : [];
  if (contexts.length !== 1) throw new KubeconfigError('no current-context is set');
  return asEntry(asEntry(contexts[0]).context);
}

/** `<field>-data` (base64) or the file `<field>` names; undefined when neither is set. */
function material(entry: Entry, field: string, base: string): Buffer | undefined {
  const data = str(entry[`${field}-data`]);
  if (data) return Buffer.from(data, 'base64');
  const file = str(entry[field]);
  if (!file) return undefined;
  try {
    return readFileSync(resolve(base, file));
  } catch (err) {
    throw new KubeconfigError(`${field}: ${(err as Error).message}`);
  }
}

/** Parses the text of a webhook configuration; `base` is the directory relative paths start from. */
export function parseWebhookKubeconfig(text: string, base: string): WebhookEndpoint {
  let doc: Entry;
  try {
    doc = asEntry(YAML.parse(text));
  } catch (err) {
    throw new KubeconfigError(`not a valid client configuration: ${(err as Error).message}`);
  }
  const context = currentContext(doc);
  const cluster = named(doc.clusters, str(context.cluster), 'cluster', 'cluster');
  const user = context.user ? named(doc.users, str(context.user), 'user', 'user') : {};
  let url: URL;
  try {
    url = new URL(str(cluster.server));
  } catch {
    throw new KubeconfigError(`cluster server "${str(cluster.server)}" is not a URL`);
  }
  if (url.protocol !== 'https:') throw new KubeconfigError(`cluster server "${url.href}" must use https`);
  const cert = material(user, 'client-certificate', base);
  const key = material(user, 'client-key', base);
  if (Boolean(cert) !== Boolean(key)) throw new KubeconfigError('client-certificate and client-key must be given together');
  return {
    url, ca: material(cluster, 'certificate-authority', base), cert, key,
    token: str(user.token) || undefined, insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}

/** Reads a webhook configuration file. */
export function loadWebhookKubeconfig(path: string): WebhookEndpoint {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`cannot read webhook configuration '${path}': ${(err as Error).message}`);
  }
  try {
    return parseWebhookKubeconfig(text, dirname(resolve(path)));
  } catch (err) {
    throw new KubeconfigError(`webhook configuration '${path}': ${(err as Error).message}`);
  }
}
