// Conversion between a CRD's served versions.
import { X509Certificate } from 'node:crypto';
import type { ApiObject } from '../apimachinery/meta.js';
import { asObj, str } from '../registry/values.js';
import type { Converter } from './types.js';

/** `None`: the same object under another apiVersion. */
export const noneConverter: Converter = {
  convert: async (objects: ApiObject[], desiredAPIVersion: string) =>
    objects.map((o) => (o.apiVersion === desiredAPIVersion ? o : { ...o, apiVersion: desiredAPIVersion })),
};

/** The conversion webhook's `clientConfig`, when the CRD converts by webhook. */
export const webhookClientConfig = (crd: ApiObject): Record<string, unknown> | undefined =>
  asObj(asObj(asObj(asObj(crd.spec)?.conversion)?.webhook)?.clientConfig);

const PEM_CERT = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The PEM certificates of a base64 `caBundle`; undefined when it holds none or one does not parse. */
export function caBundleCerts(caBundle: string): string[] | undefined {
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
