// The kinds CustomResourceDefinitions define, learnt at run time: every CRD is
// listed at start, then followed on the change stream, so a CRD's versions are
// served as soon as it is Established and no longer once it is gone. When the
// stream cannot be vouched for, everything is listed again.
import { kindsFor, servingState } from '../internal/apiextensions/kinds.js';
import type { ServiceResolver } from '../internal/apiextensions/conversion.js';
import { group } from '../internal/names/index.js';
import type { Registry } from '../internal/registry/index.js';
import { listPages, type KeyValue, type StorageClient, type StorageEvent } from '../internal/storage/client.js';
import { collectionPrefix } from '../internal/storage/keys.js';
import { decodeStored } from '../internal/storage/objects.js';
import type { WatchHub } from './hub.js';

const CRD_PREFIX = collectionPrefix(group('apiextensions'), 'customresourcedefinitions');
const RETRY_MS = 500;
const LIST_PAGE = 500;

export class CustomKinds {
  /** What each served CRD's kinds were built from, so a change of nothing they depend on builds nothing. */
  private readonly built = new Map<string, string>();
  /** The revision each CRD was last seen changed at (deleted ones too): a list read before an event does not undo it. */
  private readonly seenAt = new Map<string, number>();
  private closed = false;
  /** Every CRD was listed once: until then a custom kind may be missing. */
  private listed = false;

  /** `resolve` finds the service reference of a conversion webhook. */
  constructor(private readonly storage: StorageClient, private readonly registry: Registry, private readonly hub: WatchHub,
    private readonly resolve?: ServiceResolver) {}

  /** Follows the CRDs; resolves once they were listed (retried until storage answers). */
  async start(): Promise<void> {
    this.follow();
    await this.relistUntilDone();
    this.listed = true;
  }

  /** Lists every CRD, tried again until storage answers (or this closes). */
  private async relistUntilDone(): Promise<void> {
    while (!this.closed) {
      try {
        await this.relist();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** The `crd-informer-synced` start-up check: fails until every CRD was listed. */
  readonly check = { name: 'poststarthook/crd-informer-synced', run: () => { if (!this.listed) throw new Error('CustomResourceDefinitions not listed yet'); } };

  close(): void {
    this.closed = true;
  }

  private follow(): void {
    this.hub.register(CRD_PREFIX, {
      onEvent: (ev) => this.onEvent(ev),
      onFail: () => {
        if (this.closed) return;
        setTimeout(() => { this.follow(); void this.relistUntilDone(); }, RETRY_MS).unref();
      },
    });
  }

  private onEvent(ev: StorageEvent): void {
    if (!ev.kv) return;
    const name = nameOf(ev.kv.key);
    if (!this.isNewer(name, ev.revision)) return;
    if (ev.type === 'DELETE') this.remove(name);
    else if (ev.type === 'PUT') this.apply(name, ev.kv);
  }

  /** Lists every CRD: serves each as it is now, stops serving those gone. */
  private async relist(): Promise<void> {
    const seen = new Set<string>();
    let listedAt = 0;
    for await (const page of listPages(this.storage, CRD_PREFIX, LIST_PAGE)) {
      listedAt = page.revision;
      for (const kv of page.items) {
        const name = nameOf(kv.key);
        seen.add(name);
        if (this.isNewer(name, kv.modRevision)) this.apply(name, kv);
      }
    }
    for (const name of [...this.built.keys()]) if (!seen.has(name) && (this.seenAt.get(name) ?? 0) <= listedAt) this.remove(name);
  }

  private isNewer(name: string, revision: number): boolean {
    if ((this.seenAt.get(name) ?? 0) > revision) return false;
    this.seenAt.set(name, revision);
    return true;
  }

  /** Serves a stored CRD; one that cannot be decoded or built is not served (and said so) rather than failing the stream. */
  private apply(name: string, kv: KeyValue): void {
    try {
      const crd = decodeStored(kv);
      const state = servingState(crd);
      if (this.built.get(name) === state) return;
      const kinds = kindsFor(crd, this.resolve);
      if (kinds.length === 0) {
        this.remove(name);
        return;
      }
      this.built.set(name, state);
      this.registry.define(name, kinds);
    } catch (err) {
      console.error(`gateway: CustomResourceDefinition ${name} is not served: ${(err as Error).message}`);
      this.remove(name);
    }
  }

  private remove(name: string): void {
    this.built.delete(name);
    this.registry.define(name, []);
  }
}

const nameOf = (key: string): string => key.slice(key.lastIndexOf('/') + 1);

