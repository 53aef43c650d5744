// Reinvocation, as the platform does it: a webhook or policy that changed the
// object asks for one more pass of the mutating phase. In that pass the in-tree
// plugins run again, and a webhook or policy runs again only when it has
// reinvocationPolicy IfNeeded and the object changed after it last ran. The
// state is the request's own, made by the chain for each request.
import { deepEqual } from '../registry/values.js';
import type { JsonObject, Reinvocation, ReinvocationTracker } from './types.js';

class PluginTracker implements ReinvocationTracker {
  /** IfNeeded invocations that ran and have not seen a change since. */
  private unchanged = new Set<string>();
  /** Invocations the second pass runs again. */
  private readonly again = new Set<string>();
  /** The object as the plugin last left it, kept while an IfNeeded invocation could need it. */
  private left?: JsonObject;

  constructor(private readonly request: RequestReinvocation) {}

  shouldRun(key: string): boolean {
    return !this.request.reinvoking || this.again.has(key);
  }

  ran(key: string, changed: boolean, ifNeeded: boolean): void {
    if (changed) {
      this.changedSinceRun();
      this.request.requested = true;
    }
    if (ifNeeded) this.unchanged.add(key);
  }

  /** The object reaches the plugin: in the second pass, a change the in-tree plugins made marks the IfNeeded ones. */
  entering(object: JsonObject | undefined): void {
    if (this.request.reinvoking && this.unchanged.size && !deepEqual(this.left, object)) this.changedSinceRun();
  }

  leaving(object: JsonObject | undefined): void {
    this.left = this.unchanged.size ? structuredClone(object) : undefined;
  }

  private changedSinceRun(): void {
    for (const key of this.unchanged) this.again.add(key);
    this.unchanged = new Set();
  }
}

export class RequestReinvocation implements Reinvocation {
  reinvoking = false;
  /** Set when a webhook or policy changed the object: the mutating phase runs once more. */
  requested = false;
  private readonly trackers = new Map<string, PluginTracker>();

  tracker(plugin: string): ReinvocationTracker {
    let tracker = this.trackers.get(plugin);
    if (!tracker) this.trackers.set(plugin, tracker = new PluginTracker(this));
    return tracker;
  }

  /** Whether a second pass is due; when it is, what follows is that pass. */
  startSecondPass(): boolean {
    if (this.reinvoking || !this.requested) return false;
    this.reinvoking = true;
    return true;
  }

  /** Called by the chain around each mutating plugin, with the object it gets and the object it leaves. */
  entering(plugin: string, object: JsonObject | undefined): void {
    this.trackers.get(plugin)?.entering(object);
  }

  leaving(plugin: string, object: JsonObject | undefined): void {
    this.trackers.get(plugin)?.leaving(object);
  }
}
