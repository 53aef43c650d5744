// Keeps the node graph current from storage: one reflector per kind that
// relates objects to nodes, keeping per object only the edges it contributes
// (never the object); every change of the graph is reported, so the policy
// generation moves.
import { group } from '../../names/index.js';
import { Reflector } from '../../storage/reflector.js';
import { collectionPrefix } from '../../storage/keys.js';
import { decodeStored } from '../../storage/objects.js';
import type { KeyValue, StorageClient } from '../../storage/client.js';
import { NodeGraph, type Edge } from './graph.js';
import { nodeNamedEdges, podEdges, pvEdges } from './references.js';

type EdgesOf = (obj: Record<string, any>) => Edge[];

const SOURCES: Array<{ prefix: string; edges: EdgesOf }> = [
  { prefix: collectionPrefix('', 'pods'), edges: podEdges },
  { prefix: collectionPrefix('', 'persistentvolumes'), edges: pvEdges },
  { prefix: collectionPrefix(group('storage'), 'volumeattachments'), edges: (o) => nodeNamedEdges('volumeattachment', o) },
  { prefix: collectionPrefix(group('resource'), 'resourceslices'), edges: (o) => nodeNamedEdges('resourceslice', o) },
];

/** Objects that relate to no node (unbound pods) share one empty list. */
const NO_EDGES: Edge[] = Object.freeze([]) as unknown as Edge[];

const edgesOf = (edges: EdgesOf) => (kv: KeyValue): Edge[] => {
  const found = edges(decodeStored(kv));
  return found.length ? found : NO_EDGES;
};

export class NodeGraphPopulator {
  readonly graph = new NodeGraph();
  private readonly reflectors: Array<Reflector<Edge[]>>;

  constructor(storage: StorageClient, onChange: () => void) {
    this.reflectors = SOURCES.map(({ prefix, edges }) => new Reflector<Edge[]>(storage, prefix, {
      upsert: (key, found) => { if (this.graph.set(key, found)) onChange(); },
      deleted: (key) => { if (this.graph.set(key, NO_EDGES)) onChange(); },
    }, edgesOf(edges)));
  }

  start(): this {
    for (const r of this.reflectors) r.start();
    return this;
  }

  /** Resolves true once every kind has been listed, false after the timeout. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    return (await Promise.all(this.reflectors.map((r) => r.waitForSync(timeoutMs)))).every(Boolean);
  }

  stop(): void {
    for (const r of this.reflectors) r.stop();
  }
}
