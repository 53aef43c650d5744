// The node authorizer's graph: vertices are objects (`type/namespace/name`),
// edges point from an object to what uses it (secret -> pod -> node). Each
// stored object contributes a set of edges, replaced whole when it changes, so
// shared edges (two pods using one secret) are counted and survive the first
// removal.
export type VertexType = 'node' | 'pod' | 'secret' | 'configmap' | 'serviceaccount' | 'pvc' | 'pv'
  | 'resourceclaim' | 'volumeattachment' | 'resourceslice';

export const vertex = (type: VertexType, namespace: string, name: string): string => `${type}/${namespace}/${name}`;

export interface Edge {
  from: string;
  to: string;
}

export class NodeGraph {
  private readonly out = new Map<string, Map<string, number>>();
  private readonly contributions = new Map<string, Edge[]>();

  /** Replaces the edges one object contributes; returns whether anything changed. */
  set(owner: string, edges: Edge[]): boolean {
    const before = this.contributions.get(owner) ?? [];
    if (sameEdges(before, edges)) return false;
    for (const e of before) this.unlink(e);
    for (const e of edges) this.link(e);
    if (edges.length) this.contributions.set(owner, edges);
    else this.contributions.delete(owner);
    return true;
  }

  /** Whether a path leads from the vertex to the node, never passing through another node. */
  hasPath(from: string, nodeName: string): boolean {
    const target = vertex('node', '', nodeName);
    const seen = new Set<string>([from]);
    const stack = [from];
    while (stack.length) {
      const current = stack.pop()!;
      for (const next of this.out.get(current)?.keys() ?? []) {
        if (next === target) return true;
        if (seen.has(next) || next.startsWith('node/')) continue;
        seen.add(next);
        stack.push(next);
      }
    }
    return false;
  }

  private link({ from, to }: Edge): void {
    let targets = this.out.get(from);
    if (!targets) this.out.set(from, (targets = new Map()));
    targets.set(to, (targets.get(to) ?? 0) + 1);
  }

  private unlink({ from, to }: Edge): void {
    const targets = this.out.get(from);
    const count = targets?.get(to) ?? 0;
    if (count > 1) targets!.set(to, count - 1);
    else targets?.delete(to);
    if (targets && targets.size === 0) this.out.delete(from);
  }
}

function sameEdges(a: Edge[], b: Edge[]): boolean {
  if (a.length !== b.length) return false;
  const key = (e: Edge) => `${e.from}>${e.to}`;
  const left = new Set(a.map(key));
  return b.every((e) => left.has(key(e)));
}
