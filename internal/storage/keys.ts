// The storage key of an object: `<group>/<resource>/<namespace>/<name>`, the core
// group spelled `core` and cluster-scoped kinds with an empty namespace segment, so
// a collection, one namespace of it and the rest of a page are prefix scans.

const groupSegment = (group: string): string => group || 'core';

/** The key of one object. */
export function objectKey(group: string, resource: string, namespace: string, name: string): string {
  return `${groupSegment(group)}/${resource}/${namespace}/${name}`;
}

/** The prefix of a collection, or of one namespace of it when namespace is given. */
export function collectionPrefix(group: string, resource: string, namespace?: string): string {
  const base = `${groupSegment(group)}/${resource}/`;
  return namespace === undefined ? base : `${base}${namespace}/`;
}

/** The collection part of a key or prefix (`<group>/<resource>/`); '' for a prefix wider than one collection. */
export function collectionOf(keyOrPrefix: string): string {
  const first = keyOrPrefix.indexOf('/');
  const second = first < 0 ? -1 : keyOrPrefix.indexOf('/', first + 1);
  return second < 0 ? '' : keyOrPrefix.slice(0, second + 1);
}

/** Splits a key into its four segments; undefined when it is not an object key. */
export function parseKey(key: string): { group: string; resource: string; namespace: string; name: string } | undefined {
  const parts = key.split('/');
  if (parts.length !== 4 || !parts[0] || !parts[1] || !parts[3]) return undefined;
  return { group: parts[0] === 'core' ? '' : parts[0], resource: parts[1], namespace: parts[2], name: parts[3] };
}
