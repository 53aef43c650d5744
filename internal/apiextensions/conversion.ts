// Conversion between a CRD's served versions by `Webhook`: the CRD's conversion
// webhook asked in a ConversionReview (`None` rewrites the apiVersion in place, in kinds.ts).
import { randomUUID, X509Certificate } from 'node:crypto';
import type { ApiObject } from '../apimachinery/meta.js';
import { StatusError } from '../apimachinery/status.js';
import { asList, asObj, num, str } from '../registry/values.js';
import { type RetryPolicy, WebhookClient } from '../webhook/client.js';
import type { WebhookEndpoint } from '../webhook/kubeconfig.js';
import { checkConverted, convertedObjects, gvkString, type ReviewError, reviewRequest, reviewVersion } from './conversionreview.js';
import type { Converter } from './types.js';

/** The conversion webhook's `clientConfig`, when the CRD converts by webhook. */
const webhookClientConfig = (crd: ApiObject): Record<string, unknown> | undefined =>
  asObj(asObj(asObj(asObj(crd.spec)?.conversion)?.webhook)?.clientConfig);

const PEM_CERT = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The PEM certificates of a base64 `caBundle`; undefined when it holds none or one does not parse. */
function caBundleCerts(caBundle: string): string[] | undefined {
  const pems = Buffer.from(caBundle, 'base64').toString('utf8').match(PEM_CERT) ?? [];
  try {
    for (const pem of pems) new X509Certificate(pem);
  } catch {
    return undefined;
  }
  return pems.length ? pems : undefined;
}

/** Whether the conversion webhook's CA bundle, if any, holds certificates (as the platform checks before establishing). */
export function caBundleValid(crd: ApiObject): boolean {
  const caBundle = str(webhookClientConfig(crd)?.caBundle);
  return !caBundle || caBundleCerts(caBundle) !== undefined;
}

/** A service reference of a webhook's clientConfig. */
export interface ServiceRef { namespace: string; name: string; port: number }
/** Where a service reference leads: the address to connect to. */
export type ServiceResolver = (ref: ServiceRef) => Promise<{ host: string; port: number }>;

/** How long the webhook has to answer one review, as the platform allows. */
const WEBHOOK_TIMEOUT_MS = 30_000;
const ONE_TRY: RetryPolicy = { deadlineMs: WEBHOOK_TIMEOUT_MS, attempts: 1, initialBackoffMs: 0 };
const DEFAULT_SERVICE_PORT = 443;

/** Where the webhook is: its `url`, or its service reference resolved (the certificate must then name `<service>.<namespace>.svc`). */
async function webhookEndpoint(config: Record<string, unknown>, ca: Buffer | undefined, resolve?: ServiceResolver): Promise<WebhookEndpoint> {
  const service = asObj(config.service);
  if (!service) return { url: withTimeout(new URL(str(config.url) ?? '')), ca, insecureSkipTlsVerify: false };
  const ref = { namespace: str(service.namespace) ?? '', name: str(service.name) ?? '', port: num(service.port) ?? DEFAULT_SERVICE_PORT };
  const serverName = `${ref.name}.${ref.namespace}.svc`;
  if (!resolve) throw new Error(`service "${ref.name}" cannot be resolved`);
  const { host, port } = await resolve(ref);
  const url = new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}${str(service.path) ?? ''}`);
  return { url: withTimeout(url), ca, serverName, insecureSkipTlsVerify: false };
}

/** The timeout the platform's client writes into the request. */
function withTimeout(url: URL): URL {
  url.searchParams.set('timeout', `${WEBHOOK_TIMEOUT_MS / 1000}s`);
  return url;
}

/** What is wrong with a converted object, in the platform's words for one object (`index` undefined) or one of a list
 * (counted from 1 there, as the platform does once it has taken the object in). */
function invalidAnswer(err: ReviewError, index?: number): string {
  if (index === undefined) {
    if (err.fault === 'type') return `returned invalid object at index 0: ${err.message}`;
    return err.fault === 'metadata' ? `returned invalid metadata: ${err.message}` : `returned invalid object: ${err.message}`;
  }
  if (err.fault === 'metadata') return `returned invalid metadata in object at index ${index + 1}: ${err.message}`;
  return `returned invalid converted object at index ${index + 1}: ${err.message}`;
}

/** `Webhook`: objects not yet in the desired version are sent in one ConversionReview to the CRD's conversion
 * webhook (its service references resolved by `resolve`); a failure is a 500 Status, as the platform answers it. */
export function webhookConverter(crd: ApiObject, resolve?: ServiceResolver): Converter {
  const webhook = asObj(asObj(asObj(crd.spec)?.conversion)?.webhook) ?? {};
  const config = webhookClientConfig(crd) ?? {};
  const reviewVersions = asList(webhook.conversionReviewVersions).filter((v): v is string => typeof v === 'string');
  const caBundle = str(config.caBundle);
  const ca = caBundle ? Buffer.from(caBundle, 'base64') : undefined;
  const clients = new Map<string, WebhookClient>();
  const clientFor = (endpoint: WebhookEndpoint) => {
    const key = `${endpoint.url.host}`;
    if (!clients.has(key)) clients.set(key, new WebhookClient(endpoint, ONE_TRY));
    return clients.get(key)!;
  };

  return {
    async convert(objects: ApiObject[], desiredAPIVersion: string): Promise<ApiObject[]> {
      const sent = objects.filter((o) => o.apiVersion !== desiredAPIVersion);
      if (sent.length === 0) return objects;
      const gvk = gvkString(sent[0]);
      const fail = (what: string) => new StatusError(500, '', `conversion webhook for ${gvk} ${what}`);
      let answered: unknown[];
      try {
        const version = reviewVersion(reviewVersions);
        const uid = randomUUID();
        const endpoint = await webhookEndpoint(config, ca, resolve);
        const answer = await clientFor(endpoint).post(reviewRequest(version, uid, desiredAPIVersion, sent))
          .catch((err: Error) => { throw new Error(`Post "${endpoint.url}": ${err.message}`); });
        answered = convertedObjects(version, uid, answer);
      } catch (err) {
        throw fail(`failed: ${(err as Error).message}`);
      }
      if (answered.length !== sent.length) throw fail(`returned ${answered.length} objects, expected ${sent.length}`);
      let next = 0;
      return objects.map((o) => {
        if (o.apiVersion === desiredAPIVersion) return o;
        const index = next++;
        try {
          return checkConverted(o, answered[index], desiredAPIVersion);
        } catch (err) {
          throw fail(invalidAnswer(err as ReviewError, sent.length === 1 ? undefined : index));
        }
      });
    },
  };
}
