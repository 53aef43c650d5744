// The field manager a write is recorded under, from its query and User-Agent.
import { badRequest } from '../internal/apimachinery/status.js';
import { GROUP_META } from '../internal/names/index.js';
import { managerName, validateManagerName } from '../internal/patch/index.js';
import type { ResourceRequest } from './context.js';

/** The manager of a non-apply write: `fieldManager`, else derived from the User-Agent. */
export function updateManager(r: ResourceRequest, optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): string {
  const requested = r.query.get('fieldManager');
  if (requested !== null) validateManagerName(requested, optionsKind);
  return managerName(requested, r.ctx.get('User-Agent') || undefined);
}

/** The manager an apply names, which it must. */
export function applyManager(r: ResourceRequest): string {
  const manager = r.query.get('fieldManager');
  if (!manager) throw badRequest(`PatchOptions.${GROUP_META} "" is invalid: fieldManager: Required value: is required for apply patch`);
  validateManagerName(manager, 'PatchOptions');
  return manager;
}
