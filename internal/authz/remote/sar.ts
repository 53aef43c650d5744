// The SubjectAccessReview a remote authorizer is asked with: the v1 spec (also
// what match conditions see as `request`), or its v1beta1 form, where the
// groups are named `group`. Selectors travel as requirements.
import { group } from '../../names/index.js';
import { fieldRequirements, labelRequirements, type SelectorRequirement } from '../attributes.js';
import type { Attributes } from '../types.js';

export type SarVersion = 'v1' | 'v1beta1';

export interface SarSpec {
  resourceAttributes?: {
    namespace: string; verb: string; group: string; version: string; resource: string; subresource: string; name: string;
    fieldSelector?: { requirements: SelectorRequirement[] };
    labelSelector?: { requirements: SelectorRequirement[] };
  };
  nonResourceAttributes?: { path: string; verb: string };
  user: string;
  groups: string[];
  extra: Record<string, string[]>;
  uid: string;
}

/** The v1 spec of a request's attributes. */
export function sarSpec(attributes: Attributes): SarSpec {
  const { user } = attributes;
  const extra = Object.fromEntries(Object.entries(user.extra ?? {}).map(([k, v]) => [k, [...(v?.values ?? [])]]));
  const spec: SarSpec = { user: user.username, groups: [...user.groups], extra, uid: user.uid };
  const r = attributes.resource;
  if (r) {
    const fields = fieldRequirements(attributes);
    const labels = labelRequirements(attributes);
    spec.resourceAttributes = {
      namespace: r.namespace, verb: r.verb, group: r.group, version: r.version, resource: r.resource, subresource: r.subresource, name: r.name,
      ...(fields?.length ? { fieldSelector: { requirements: fields } } : {}),
      ...(labels?.length ? { labelSelector: { requirements: labels } } : {}),
    };
  } else {
    spec.nonResourceAttributes = { path: attributes.nonResource?.path ?? '', verb: attributes.nonResource?.verb ?? '' };
  }
  return spec;
}

/** The review sent to a webhook in the configured version. */
export function subjectAccessReview(attributes: Attributes, version: SarVersion): Record<string, unknown> {
  const { groups, ...rest } = sarSpec(attributes);
  const spec = version === 'v1' ? { ...rest, groups } : { ...rest, group: groups };
  return { apiVersion: `${group('authorization')}/${version}`, kind: 'SubjectAccessReview', spec };
}
