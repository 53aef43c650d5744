// AlwaysPullImages: every container of a pod (init and ephemeral ones too) is
// set to pull its image always, so a pod can run only images its own
// credentials may pull, not whatever another pod left on the node. An update
// that brings no new image is left alone; the validating half refuses a pod a
// later mutation set back.
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation, PluginAnswer } from '../types.js';

export const ALWAYS_PULL_IMAGES = 'AlwaysPullImages';

interface Container {
  image?: string;
  imagePullPolicy?: string;
}

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/** Every container of a pod with its field path. */
function containers(pod: JsonObject | undefined): Array<[Container, string]> {
  const spec = (pod?.spec ?? {}) as Record<string, unknown>;
  return CONTAINER_LISTS.flatMap((list) => (Array.isArray(spec[list]) ? spec[list] as Container[] : [])
    .map((c, i): [Container, string] => [c, `spec.${list}[${i}]`]));
}

/** Requests the plugin leaves alone: not pods (or their ephemeralcontainers), or an update without a new image. */
function ignored(request: AdmissionRequest): boolean {
  const { group, resource } = request.resource;
  if (group !== '' || resource !== 'pods' || (request.subresource && request.subresource !== 'ephemeralcontainers') || !request.object) return true;
  if (request.operation !== 'UPDATE') return false;
  const before = new Set(containers(request.oldObject).map(([c]) => c.image));
  return containers(request.object).every(([c]) => before.has(c.image));
}

class AlwaysPullImagesDefaulter implements AdmissionPlugin {
  readonly name = ALWAYS_PULL_IMAGES;
  readonly phase = 'mutating' as const;

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (ignored(request)) return;
    const object = structuredClone(request.object!);
    for (const [container] of containers(object)) container.imagePullPolicy = 'Always';
    return { object };
  }
}

class AlwaysPullImagesValidator implements AdmissionPlugin {
  readonly name = ALWAYS_PULL_IMAGES;
  readonly phase = 'validating' as const;

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (ignored(request)) return;
    const wrong = containers(request.object).find(([c]) => c.imagePullPolicy !== 'Always');
    if (!wrong) return;
    const [container, path] = wrong;
    throw forbiddenRequest(request,
      `${path}.imagePullPolicy: Unsupported value: ${JSON.stringify(container.imagePullPolicy ?? '')}: supported values: "Always"`);
  }
}

export const alwaysPullImages = (): AdmissionPlugin[] => [new AlwaysPullImagesDefaulter(), new AlwaysPullImagesValidator()];
