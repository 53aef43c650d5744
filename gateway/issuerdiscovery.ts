// The service-account issuer discovery documents: the OpenID configuration and
// the key set that verifies service-account tokens, for relying parties outside
// the cluster. Read from the authentication service and cached; served only
// when the issuer is an https URL, as upstream.
import type Koa from 'koa';
import { StatusError } from '../internal/apimachinery/status.js';
import type { Backends } from './backends.js';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
const CACHE_MS = 60_000;
/** What clients may cache the documents for, as upstream. */
const CACHE_CONTROL = 'public, max-age=3600';

interface Documents {
  configuration: Record<string, unknown>;
  jwks: string;
}

const isHttpsUrl = (text: string): boolean => {
  try {
    return new URL(text).protocol === 'https:';
  } catch {
    return false;
  }
};

export class IssuerDiscovery {
  private cached?: { until: number; documents: Promise<Documents | undefined> };

  constructor(private readonly backends: Backends) {}

  static serves(path: string): boolean {
    return path === OPENID_CONFIGURATION_PATH || path === JWKS_PATH;
  }

  /** Answers one of the two documents; 404 when the issuer is not an https URL. */
  async serve(ctx: Koa.Context, serverAddress: string): Promise<void> {
    const documents = await this.documents(serverAddress);
    if (!documents) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    ctx.status = 200;
    ctx.set('Cache-Control', CACHE_CONTROL);
    if (ctx.path === JWKS_PATH) {
      ctx.type = 'application/jwk-set+json';
      ctx.body = documents.jwks;
    } else {
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(documents.configuration);
    }
  }

  private documents(serverAddress: string): Promise<Documents | undefined> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.documents;
    const documents = this.fetch(serverAddress);
    this.cached = { until: Date.now() + CACHE_MS, documents };
    documents.catch(() => { this.cached = undefined; });
    return documents;
  }

  private async fetch(serverAddress: string): Promise<Documents | undefined> {
    const info = await this.backends.serviceAccountIssuer();
    if (!isHttpsUrl(info.issuer)) return undefined;
    return {
      jwks: info.jwks,
      configuration: {
        issuer: info.issuer,
        jwks_uri: info.jwksUri || `https://${serverAddress}${JWKS_PATH}`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: info.signingAlgorithms,
      },
    };
  }
}
