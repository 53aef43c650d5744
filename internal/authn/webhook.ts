// Webhook token authentication: a bearer token no other authenticator knows is
// sent in a TokenReview (of --authentication-token-webhook-version) to the
// service of --authentication-token-webhook-config-file, which answers with the
// user. The answer must be a TokenReview of the version sent. Audiences follow
// the Kubernetes API server: the review asks for the audiences wanted (those of
// the request, else the API's); an answer naming none is taken to be valid for
// the API's audiences; the user is accepted only for audiences in both.
import { isObject } from '../apimachinery/meta.js';
import { group } from '../names/index.js';
import { WebhookClient, type RetryPolicy } from '../webhook/client.js';
import { loadWebhookKubeconfig } from '../webhook/kubeconfig.js';
import { intersect } from './audiences.js';
import { CachedTokenAuthenticator } from './tokencache.js';
import { AuthenticationError, newUser, type Authenticated, type TokenAuthenticator } from './types.js';

export const TOKEN_REVIEW_VERSIONS = ['v1beta1', 'v1'] as const;
export type TokenReviewVersion = typeof TOKEN_REVIEW_VERSIONS[number];

/** Posts a review, answers the parsed reply. */
export interface ReviewPoster {
  post(body: unknown): Promise<unknown>;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function extraOf(v: unknown): Record<string, string[]> {
  return isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, values]) => [k, strings(values)])) : {};
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  private readonly apiVersion: string;

  constructor(private readonly poster: ReviewPoster, version: TokenReviewVersion, private readonly apiAudiences: string[] = []) {
    this.apiVersion = `${group('authentication')}/${version}`;
  }

  async authenticateToken(token: string, audiences: string[]): Promise<Authenticated | undefined> {
    const wanted = audiences.length ? audiences : this.apiAudiences;
    const status = await this.review(token, wanted);
    let granted: string[] = [];
    if (wanted.length) {
      const valid = strings(status.audiences);
      granted = intersect(wanted, valid.length ? valid : this.apiAudiences);
      if (!granted.length) return undefined;
    }
    if (status.authenticated !== true) {
      if (typeof status.error === 'string' && status.error) throw new AuthenticationError(status.error);
      return undefined;
    }
    const user = isObject(status.user) ? status.user : {};
    if (typeof user.username !== 'string' || !user.username) throw new AuthenticationError('the token webhook answered a user without a name');
    const uid = typeof user.uid === 'string' ? user.uid : '';
    return { user: newUser(user.username, { uid, groups: strings(user.groups), extra: extraOf(user.extra) }), audiences: granted, authenticator: 'webhook' };
  }

  /** The status of the webhook's answer; a failed call or an answer of another kind or version is an AuthenticationError. */
  private async review(token: string, audiences: string[]): Promise<Record<string, unknown>> {
    const review = { apiVersion: this.apiVersion, kind: 'TokenReview', spec: { token, ...(audiences.length ? { audiences } : {}) } };
    let answer: unknown;
    try {
      answer = await this.poster.post(review);
    } catch (err) {
      throw new AuthenticationError(`the token webhook failed: ${(err as Error).message}`);
    }
    if (!isObject(answer) || answer.kind !== 'TokenReview' || answer.apiVersion !== this.apiVersion) {
      throw new AuthenticationError(`the token webhook did not answer a TokenReview of ${this.apiVersion}`);
    }
    return isObject(answer.status) ? answer.status : {};
  }
}

export interface WebhookTokenOptions {
  configFile: string;
  version: string;
  cacheTtlMs: number;
  apiAudiences?: string[];
  retry?: RetryPolicy;
}

/** The webhook authenticator of the flags, behind its cache; a bad version or file throws. */
export function webhookTokenAuthenticator(opts: WebhookTokenOptions): TokenAuthenticator {
  if (!(TOKEN_REVIEW_VERSIONS as readonly string[]).includes(opts.version)) {
    throw new Error(`unsupported --authentication-token-webhook-version "${opts.version}": use v1beta1 or v1`);
  }
  const client = new WebhookClient(loadWebhookKubeconfig(opts.configFile), opts.retry);
  const webhook = new WebhookTokenAuthenticator(client, opts.version as TokenReviewVersion, opts.apiAudiences);
  return new CachedTokenAuthenticator(webhook, opts.cacheTtlMs);
}
