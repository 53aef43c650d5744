// DefaultIngressClass: an Ingress created without a class (no
// `spec.ingressClassName` and no class annotation) gets the default
// IngressClass, the one annotated `is-default-class: "true"`; with several, the
// newest. Without one the Ingress is left as it is.
import { DEFAULT_INGRESS_CLASS_ANNOTATION, INGRESS_CLASS_ANNOTATION, group, wellKnownValue } from '../../names/index.js';
import type { ApiObject } from '../../apimachinery/meta.js';
import type { StorageClient } from '../../storage/client.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation, PluginAnswer } from '../types.js';
import { KindCache } from '../kindcache.js';
import { createdAt, newestDefault } from './default-class.js';

export const DEFAULT_INGRESS_CLASS = 'DefaultIngressClass';
const NETWORKING = group('networking');

interface IngressClassFacts {
  name: string;
  created: number;
  isDefault: boolean;
}

const ingressClassFacts = (obj: ApiObject): IngressClassFacts => ({
  name: obj.metadata?.name ?? '', created: createdAt(obj),
  isDefault: wellKnownValue(obj.metadata?.annotations, DEFAULT_INGRESS_CLASS_ANNOTATION) === 'true',
});

function hasClass(ingress: JsonObject): boolean {
  const annotations = (ingress.metadata as ApiObject['metadata'])?.annotations;
  if (wellKnownValue(annotations, INGRESS_CLASS_ANNOTATION) !== undefined) return true;
  const spec = ingress.spec as { ingressClassName?: unknown } | undefined;
  return spec?.ingressClassName !== undefined && spec.ingressClassName !== null;
}

export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = DEFAULT_INGRESS_CLASS;
  readonly phase = 'mutating' as const;
  private readonly classes: KindCache<IngressClassFacts>;

  constructor(storage: StorageClient) {
    this.classes = new KindCache(storage, NETWORKING, 'ingressclasses', ingressClassFacts);
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    const { group: g, resource } = request.resource;
    if (g !== NETWORKING || resource !== 'ingresses' || request.subresource || !request.object || hasClass(request.object)) return;
    const chosen = newestDefault((await this.classes.ready(request)).list());
    if (!chosen) return;
    const object = structuredClone(request.object);
    object.spec = { ...(object.spec as JsonObject | undefined), ingressClassName: chosen.name };
    return { object };
  }

  stop(): void {
    this.classes.stop();
  }
}
