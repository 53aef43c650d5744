// Reconciliation of the default policy at start: absent objects are created;
// present ones get back the rules, subjects, labels, annotations and
// aggregation selectors they miss (nothing is removed), unless annotated
// `rbac.authorization.svc.io/autoupdate: "false"` (or upstream's spelling of it). A binding whose roleRef
// differs is recreated, since roleRef cannot change.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../apimachinery/meta.js';
import { newUid, nowTimestamp } from '../apimachinery/meta.js';
import { GROUP_RBAC, RBAC_AUTOUPDATE_ANNOTATION, wellKnownValue } from '../names/index.js';
import type { StorageClient } from '../storage/client.js';
import { objectKey } from '../storage/keys.js';
import { decodeStored, encodeStored } from '../storage/objects.js';
import { uncovered } from './covers.js';
import type { PolicyIndex } from './index.js';
import { defaultPolicy } from './policy.js';
import type { PolicyRule, Subject } from './types.js';

type Obj = ApiObject & Record<string, any>;

/** The stored object with what the default misses added; undefined when nothing is missing. */
export function reconciled(existing: Obj, expected: Obj): Obj | undefined {
  const next: Obj = structuredClone(existing);
  const meta = next.metadata!;
  meta.labels = { ...expected.metadata?.labels, ...meta.labels };
  meta.annotations = { ...expected.metadata?.annotations, ...meta.annotations };
  if ('rules' in expected) addRules(next, expected);
  if ('subjects' in expected) {
    const subjects: Subject[] = next.subjects ?? [];
    for (const s of expected.subjects as Subject[]) if (!subjects.some((have) => sameSubject(have, s))) subjects.push(s);
    next.subjects = subjects;
  }
  return isDeepStrictEqual(next, existing) ? undefined : next;
}

/** Missing rules come back one permission per rule; missing aggregation selectors are added. */
function addRules(next: Obj, expected: Obj): void {
  const missing = uncovered(next.rules ?? [], expected.rules as PolicyRule[]);
  if (missing.length) next.rules = [...(next.rules ?? []), ...missing];
  const selectors = expected.aggregationRule?.clusterRoleSelectors as unknown[] | undefined;
  if (!selectors) return;
  next.aggregationRule ??= {};
  const have: unknown[] = next.aggregationRule.clusterRoleSelectors ?? [];
  for (const s of selectors) if (!have.some((h) => isDeepStrictEqual(h, s))) have.push(s);
  next.aggregationRule.clusterRoleSelectors = have;
}

const sameSubject = (a: Subject, b: Subject) =>
  a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');

const sameRoleRef = (a: Obj, b: Obj) => a.roleRef?.kind === b.roleRef?.kind && a.roleRef?.name === b.roleRef?.name;

const withServerFields = (obj: Obj): Obj => ({ ...obj, metadata: { ...obj.metadata, uid: newUid(), creationTimestamp: nowTimestamp() } });

async function reconcileOne(storage: StorageClient, resource: string, expected: Obj): Promise<void> {
  const key = objectKey(GROUP_RBAC, resource, expected.metadata?.namespace ?? '', expected.metadata!.name!);
  const found = await storage.find(key);
  if (!found) {
    const obj = withServerFields(expected);
    await storage.create(key, encodeStored(obj), obj.metadata!.uid!);
    return;
  }
  const existing = decodeStored(found) as Obj;
  if (wellKnownValue(existing.metadata?.annotations, RBAC_AUTOUPDATE_ANNOTATION) === 'false') return;
  if ('roleRef' in expected && !sameRoleRef(existing, expected)) {
    const obj = withServerFields({ ...expected, subjects: reconciled(existing, expected)?.subjects ?? existing.subjects, metadata: { ...expected.metadata } });
    await storage.delete(key, { modRevision: found.modRevision });
    await storage.create(key, encodeStored(obj), obj.metadata!.uid!);
    return;
  }
  const next = reconciled(existing, expected);
  if (next) await storage.update(key, encodeStored(next), { modRevision: found.modRevision });
}

/** Creates or completes every object of the default policy; throws on the first storage failure. */
export async function reconcileDefaultPolicy(storage: StorageClient): Promise<void> {
  const policy = defaultPolicy();
  for (const resource of ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'] as const) {
    for (const obj of policy[resource]) await reconcileOne(storage, resource, obj as Obj);
  }
}

const RETRY_MS = 500;

/** Reconciles the default policy in the background, retrying until storage takes it; `done` tells when it has
 * and the index holds every default object (so decisions already see the policy). */
export function startPolicyBootstrap(storage: StorageClient, index: PolicyIndex): { done(): boolean } {
  let reconciledOnce = false;
  const policy = defaultPolicy();
  const indexed = () => Object.entries(policy).every(([resource, objs]) =>
    objs.every((o) => index.has(resource, o.metadata?.namespace ?? '', o.metadata!.name!)));
  const done = () => reconciledOnce && indexed();
  void (async () => {
    for (;;) {
      try {
        await reconcileDefaultPolicy(storage);
        reconciledOnce = true;
        return;
      } catch (err) {
        console.error(`authz: reconciling the default RBAC policy: ${(err as Error).message}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  })();
  return { done };
}
