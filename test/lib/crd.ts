// CustomResourceDefinition manifests as tests and benchmarks create them: one
// kind in a group, its names derived from the kind, one stored version v1.
import { group } from '../../internal/names/index.js';

type Obj = Record<string, any>;

/** A namespaced CRD of `kind` (plural: lower case + s) in `groupName`, served and stored as v1 with this schema; `version` adds members to v1. */
export function crdManifest(groupName: string, kind: string, openAPIV3Schema: Obj, version: Obj = {}): Obj {
  const singular = kind.toLowerCase();
  const plural = `${singular}s`;
  return {
    apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${groupName}` },
    spec: {
      group: groupName, scope: 'Namespaced', names: { plural, singular, kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, ...version, schema: { openAPIV3Schema } }],
    },
  };
}

/** An object schema whose `spec` has these properties and validation rules (under `rulesKey`); `more` are its other properties. */
export const specSchema = (properties: Obj, rulesKey: string, rules: Obj[], more: Obj = {}): Obj =>
  ({ type: 'object', properties: { spec: { type: 'object', [rulesKey]: rules, properties }, ...more } });
