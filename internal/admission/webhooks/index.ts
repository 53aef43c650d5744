// Admission webhooks: MutatingAdmissionWebhook and ValidatingAdmissionWebhook,
// built over one shared view of the configurations, the Services they name and
// the resources served in several versions.
import type { Registry as Metrics } from 'prom-client';
import { builtinRegistry } from '../../registry/index.js';
import type { StorageClient } from '../../storage/client.js';
import type { NamespaceCache } from '../namespaces.js';
import { WebhookConfigurations, type Configurations } from './configurations.js';
import { CustomKinds } from './customkinds.js';
import type { DispatchDeps } from './dispatch.js';
import { EquivalentResources } from './match.js';
import { WebhookMetrics } from './metrics.js';
import { MutatingWebhooks, ValidatingWebhooks, type HookSource } from './plugins.js';
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
  private readonly customKinds: CustomKinds;

  constructor(ctx: WebhookContext) {
    this.configurations = new WebhookConfigurations(ctx.storage);
    const registry = builtinRegistry();
    const services = new ServiceEndpoints(ctx.storage);
    this.customKinds = new CustomKinds(ctx.storage, registry, (ref) => services.resolve(ref));
    this.deps = {
      namespaces: ctx.namespaces, equivalents: new EquivalentResources(registry), services,
      ...(ctx.metrics ? { metrics: new WebhookMetrics(ctx.metrics) } : {}),
    };
  }

  /** The webhooks of one kind of configuration; once there are any, the served custom kinds are followed too. */
  source(configurations: Configurations): HookSource {
    return {
      waitForSync: async (timeoutMs) => await configurations.waitForSync(timeoutMs)
        && (configurations.hooks().length === 0 || await this.customKinds.follow(timeoutMs)),
      hooks: () => configurations.hooks(),
    };
  }

  stop(): void {
    this.configurations.stop();
    this.customKinds.stop();
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
  return new MutatingWebhooks(s.source(s.configurations.mutating), s.deps, () => s.stop());
};

export const validatingWebhooks = (ctx: WebhookContext): ValidatingWebhooks => {
  const s = sharedFor(ctx);
  return new ValidatingWebhooks(s.source(s.configurations.validating), s.deps, () => s.stop());
};
