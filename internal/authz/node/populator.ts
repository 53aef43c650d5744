// Keeps the node graph current from storage: one reflector per kind that
// relates objects to nodes; every change of the graph is reported, so the
// policy generation moves.
import { group } from '../../names/index.js';
import { Reflector } from '../../storage/reflector.js';
import { collectionPrefix } from '../../storage/keys.js';
import type { StorageClient } from '../../storage/client.js';
import type { ApiObject } from '../../apimachinery/meta.js';
import { NodeGraph, type Edge } from './graph.js';
import { nodeNamedEdges, podEdges, pvEdges } from './references.js';

type EdgesOf = (obj: Record<string, any>) => Edge[];

const SOURCES: Array<{ prefix: string; edges: EdgesOf }> = [
  { prefix: collectionPrefix('', 'pods'), edges: podEdges },
  { prefix: collectionPrefix('', 'persistentvolumes'), edges: pvEdges },
  { prefix: collectionPrefix(group('storage'), 'volumeattachments'), edges: (o) => nodeNamedEdges('volumeattachment', o) },
  { prefix: collectionPrefix(group('resource'), 'resourceslices'), edges: (o) => nodeNamedEdges('resourceslice', o) },
];

export class NodeGraphPopulator {
  readonly graph = new NodeGraph();
  private readonly reflectors: Reflector[];

  constructor(storage: StorageClient, onChange: () => void) {
    this.reflectors = SOURCES.map(({ prefix, edges }) => new Reflector(storage, prefix, {
      upsert: (key: string, obj: ApiObject) => { if (this.graph.set(key, edges(obj as Record<string, any>))) onChange(); },
      deleted: (key: string) => { if (this.graph.set(key, [])) onChange(); },
    }));
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
