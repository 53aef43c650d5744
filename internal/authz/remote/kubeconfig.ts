// The remote end of a webhook from a client configuration file: the current
// context's cluster (server, certificate authority) and user (client
// certificate and key, or a bearer token). Relative paths resolve against the
// file's folder.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import YAML from 'yaml';

export interface WebhookTarget {
  url: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipTLSVerify: boolean;
  serverName?: string;
}

type Json = Record<string, any>;

const named = (entries: unknown, name: string, what: string): Json => {
  const found = (Array.isArray(entries) ? entries : []).find((e: Json) => e?.name === name);
  if (!found) throw new Error(`no ${what} named ${JSON.stringify(name)}`);
  return found as Json;
};

/** Data inline (`<field>-data`, base64) or in a file (`<field>`). */
function material(section: Json, field: string, dir: string): Buffer | undefined {
  if (section[`${field}-data`]) return Buffer.from(String(section[`${field}-data`]), 'base64');
  if (section[field]) return readFileSync(resolve(dir, String(section[field])));
  return undefined;
}

/** Reads a webhook's client configuration file; throws a readable error. */
export function loadWebhookTarget(path: string): WebhookTarget {
  const doc = YAML.parse(readFileSync(path, 'utf8')) as Json;
  if (!doc || typeof doc !== 'object') throw new Error(`${path}: not a client configuration`);
  const contexts = Array.isArray(doc.contexts) ? doc.contexts : [];
  const contextName = doc['current-context'] || contexts[0]?.name;
  const context = contextName ? named(contexts, contextName, 'context').context ?? {} : {};
  const clusterEntry = context.cluster ? named(doc.clusters, context.cluster, 'cluster') : doc.clusters?.[0];
  const cluster = (clusterEntry?.cluster ?? {}) as Json;
  const userEntry = context.user ? named(doc.users, context.user, 'user') : doc.users?.[0];
  const user = (userEntry?.user ?? {}) as Json;
  if (!cluster.server) throw new Error(`${path}: the cluster has no server`);
  const url = new URL(String(cluster.server));
  if (url.protocol !== 'https:') throw new Error(`${path}: the webhook server ${url.href} must use https`);
  if (url.search) throw new Error(`${path}: the webhook server ${url.href} must have no query parameters`);
  const dir = dirname(path);
  return {
    url, ca: material(cluster, 'certificate-authority', dir), cert: material(user, 'client-certificate', dir),
    key: material(user, 'client-key', dir), token: user.token ? String(user.token) : undefined,
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    serverName: cluster['tls-server-name'] ? String(cluster['tls-server-name']) : undefined,
  };
}
