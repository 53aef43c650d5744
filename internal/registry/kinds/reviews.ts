// The authentication group (v1) and the authorization group (v1): review kinds. A create
// answers the review with its status; nothing is stored.
import type { ApiObject } from '../../apimachinery/meta.js';
import { forbidden, invalid, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asList, asObj, specOf, type Obj } from '../values.js';


function attributesCauses(spec: Obj): Causes {
  const resource = spec.resourceAttributes !== undefined;
  const nonResource = spec.nonResourceAttributes !== undefined;
  if (resource === nonResource) return [invalid('spec.resourceAttributes', spec.resourceAttributes ?? null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  return [];
}

function subjectCauses(spec: Obj): Causes {
  return spec.user || asList(spec.groups).length ? [] : [invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified')];
}

const review = (validate: (obj: ApiObject) => Causes): KindSpec => ({ ephemeral: true, tracksGeneration: false, validate });

export const authenticationKinds: Record<string, KindSpec> = {
  tokenreviews: review(() => []),
  selfsubjectreviews: review(() => []),
};

export const authorizationKinds: Record<string, KindSpec> = {
  subjectaccessreviews: review((obj) => [...attributesCauses(specOf(obj)), ...subjectCauses(specOf(obj))]),
  selfsubjectaccessreviews: review((obj) => attributesCauses(specOf(obj))),
  selfsubjectrulesreviews: review(() => []),
  localsubjectaccessreviews: review((obj) => {
    const spec = specOf(obj);
    const causes = [...attributesCauses(spec), ...subjectCauses(spec)];
    const namespace = asObj(spec.resourceAttributes)?.namespace;
    if (spec.resourceAttributes !== undefined && namespace !== obj.metadata?.namespace) {
      causes.push(invalid('spec.resourceAttributes.namespace', namespace ?? '', 'must match metadata.namespace'));
    }
    if (spec.nonResourceAttributes !== undefined) causes.push(forbidden('spec.nonResourceAttributes', 'disallowed on this kind of request'));
    return causes;
  }),
};
