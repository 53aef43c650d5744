// The names a CustomResourceDefinition may hold: each name it asks for in
// `spec.names` is accepted unless another CRD of its group already holds it
// (resource names and kinds are two separate pools), as the platform's naming
// controller decides. What is refused keeps its previously accepted value.
import type { ApiObject } from '../apimachinery/meta.js';
import { type Condition, type CrdNames, findCondition, statusOf } from '../apiextensions/conditions.js';
import { groupOf } from '../apiextensions/crd.js';
import { asList, asObj, deepEqual, str, specOf } from '../registry/values.js';

export interface NamingOutcome {
  acceptedNames: CrdNames;
  namesAccepted: Condition;
  established: Condition;
}

const strings = (v: unknown): string[] => asList(v).filter((s): s is string => typeof s === 'string');

/** `spec.names` or `status.acceptedNames` read as names, absent members empty. */
export function readNames(v: unknown): CrdNames {
  const o = asObj(v) ?? {};
  return {
    plural: str(o.plural) ?? '', singular: str(o.singular) ?? '', shortNames: strings(o.shortNames),
    kind: str(o.kind) ?? '', listKind: str(o.listKind) ?? '', categories: strings(o.categories),
  };
}

/** Names as the API writes them: plural and kind always, the rest when set. */
function written(n: CrdNames): CrdNames {
  const out: CrdNames = { plural: n.plural, kind: n.kind };
  if (n.singular) out.singular = n.singular;
  if (n.shortNames?.length) out.shortNames = n.shortNames;
  if (n.listKind) out.listKind = n.listKind;
  if (n.categories?.length) out.categories = n.categories;
  return out;
}

export const requestedNames = (crd: ApiObject): CrdNames => readNames(specOf(crd).names);
export const acceptedNames = (crd: ApiObject): CrdNames => readNames(statusOf(crd).acceptedNames);

/** Whether the CRD already holds every name it asks for (then the naming controller has nothing to do). */
export const namesSettled = (crd: ApiObject): boolean => deepEqual(requestedNames(crd), acceptedNames(crd));

/** The resource names and kinds held by the CRDs of a group (the CRD itself included, as the platform counts). */
function namesInUse(group: string, crds: Iterable<ApiObject>): { resources: Set<string>; kinds: Set<string> } {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const crd of crds) {
    if (groupOf(crd) !== group) continue;
    const held = acceptedNames(crd);
    for (const n of [held.plural, held.singular!, ...held.shortNames!]) resources.add(n);
    kinds.add(held.kind).add(held.listKind!);
  }
  return { resources, kinds };
}

/** Undefined when `requested` may be taken: it is already held, or nobody holds it. */
const conflict = (requested: string, held: string, used: Set<string>): string | undefined =>
  (requested === held || !used.has(requested) ? undefined : `"${requested}" is already in use`);

/** The short names' conflicts as one message (several listed as the platform aggregates errors). */
function shortNamesConflict(requested: CrdNames, held: CrdNames, used: Set<string>): string | undefined {
  const errors = requested.shortNames!.flatMap((s) => {
    if (held.shortNames!.includes(s) || s === held.plural || s === held.singular) return [];
    const err = conflict(s, '', used);
    return err ? [err] : [];
  });
  if (errors.length === 0) return undefined;
  return errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
}

/** The accepted names and the NamesAccepted and Established conditions of `crd`, given every CRD. */
export function decideNames(crd: ApiObject, all: Iterable<ApiObject>): NamingOutcome {
  const { resources, kinds } = namesInUse(groupOf(crd), all);
  const requested = requestedNames(crd);
  const held = acceptedNames(crd);
  const next: CrdNames = { ...held };
  let refusal: Condition | undefined;
  const check = (field: 'plural' | 'singular' | 'kind' | 'listKind', reason: string, used: Set<string>) => {
    const err = conflict(requested[field]!, held[field]!, used);
    if (err) refusal = { type: 'NamesAccepted', status: 'False', reason, message: err };
    else next[field] = requested[field]!;
  };
  check('plural', 'PluralConflict', resources);
  check('singular', 'SingularConflict', resources);
  if (!deepEqual(requested.shortNames, held.shortNames)) {
    const err = shortNamesConflict(requested, held, resources);
    if (err) refusal = { type: 'NamesAccepted', status: 'False', reason: 'ShortNamesConflict', message: err };
    else next.shortNames = requested.shortNames;
  }
  check('kind', 'KindConflict', kinds);
  check('listKind', 'ListKindConflict', kinds);
  next.categories = requested.categories;

  const namesAccepted = refusal ?? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
  return { acceptedNames: written(next), namesAccepted, established: establishedAfterNaming(crd, namesAccepted) };
}

/** Established stays as it is once True; before, it says whether the names are in (the establishing step then sets it). */
function establishedAfterNaming(crd: ApiObject, namesAccepted: Condition): Condition {
  const old = findCondition(crd, 'Established');
  if (old?.status === 'True') return old;
  if (namesAccepted.status === 'True') return { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' };
  return old ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
}
