// Admission webhooks: MutatingAdmissionWebhook and ValidatingAdmissionWebhook,
// built over one shared view of the configurations, the Services they name and
// the resources served in several versions.
import type { Registry as Metrics } from 'prom-client';
import { builtinRegistry } from '../../registry/index.js';
import type { StorageClient } from '../../storage/client.js';
import type { NamespaceCache } from '../namespaces.js';
import { WebhookConfigurations } from './configurations.js';
import type { DispatchDeps } from './dispatch.js';
import { EquivalentResources } from './match.js';
import { WebhookMetrics } from './metrics.js';
import { MutatingWebhooks, ValidatingWebhooks } from './plugins.js';
import { ServiceEndpoints } from './services.js';

export { MUTATING_ADMISSION_WEBHOOK, VALIDATING_ADMISSION_WEBHOOK, MutatingWebhooks, ValidatingWebhooks } from './plugins.js';

export interface WebhookContext {
  storage: StorageClient;
  namespaces: NamespaceCache;
  metrics?: Metrics;
}

/** What both plugins read, started once for the two. */
class Shared {
  readonly configurations: WebhookConfigurations;
  readonly deps: DispatchDeps;

  constructor(ctx: WebhookContext) {
    this.configurations = new WebhookConfigurations(ctx.storage);
    this.deps = {
      namespaces: ctx.namespaces, equivalents: new EquivalentResources(builtinRegistry()),
      services: new ServiceEndpoints(ctx.storage), ...(ctx.metrics ? { metrics: new WebhookMetrics(ctx.metrics) } : {}),
    };
  }

  stop(): void {
    this.configurations.stop();
    this.deps.services.stop();
  }
}

const shared = new WeakMap<WebhookContext, Shared>();

function sharedFor(ctx: WebhookContext): Shared {
  let found = shared.get(ctx);
  if (!found) {
    found = new Shared(ctx);
    shared.set(ctx, found);
  }
  return found;
}

export const mutatingWebhooks = (ctx: WebhookContext): MutatingWebhooks => {
  const s = sharedFor(ctx);
  return new MutatingWebhooks(s.configurations.mutating, s.deps, () => s.stop());
};

export const validatingWebhooks = (ctx: WebhookContext): ValidatingWebhooks => {
  const s = sharedFor(ctx);
  return new ValidatingWebhooks(s.configurations.validating, s.deps, () => s.stop());
};
