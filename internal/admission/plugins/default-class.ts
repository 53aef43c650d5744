// How DefaultStorageClass and DefaultIngressClass pick the default class.
import type { ApiObject } from '../../apimachinery/meta.js';

/** Of classes marked default, the newest, the first by name among equally new ones (as upstream picks). */
export function newestDefault<C extends { name: string; created: number; isDefault: boolean }>(classes: Iterable<C>): C | undefined {
  const defaults = [...classes].filter((c) => c.isDefault);
  defaults.sort((a, b) => (b.created - a.created) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return defaults[0];
}

export const createdAt = (obj: ApiObject): number => Date.parse(String(obj.metadata?.creationTimestamp ?? '')) || 0;
