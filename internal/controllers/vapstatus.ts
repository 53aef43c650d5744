// The ValidatingAdmissionPolicy status controller: for each policy generation
// not yet observed, type checks the policy's expressions against the kinds it
// matches and writes status.typeChecking and status.observedGeneration.
import type { ApiObject } from '../apimachinery/meta.js';
import { typeCheck } from '../admission/policies/typecheck.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { group } from '../names/index.js';

export const VALIDATING_ADMISSION_POLICIES = `/apis/${group('admissionregistration')}/v1/validatingadmissionpolicies`;
const RETRY_MS = 1000;

const nameOf = (p: ApiObject): string => p.metadata!.name!;
const observed = (p: ApiObject): boolean =>
  (p.status as { observedGeneration?: number } | undefined)?.observedGeneration === p.metadata?.generation;

export class ValidatingAdmissionPolicyStatusController {
  private readonly informer: Informer;
  private readonly queue = new Set<string>();
  private working = false;
  private stopped = false;

  constructor(private readonly client: ApiClient) {
    this.informer = new Informer(client, VALIDATING_ADMISSION_POLICIES, {
      upsert: (p) => { if (!observed(p)) this.enqueue(nameOf(p)); },
      deleted: () => {},
    }, { key: nameOf });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    void this.work();
  }

  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const [name] = this.queue;
        this.queue.delete(name);
        await this.sync(name).catch((err) => {
          console.error(`validatingadmissionpolicy-status controller: ${name}: ${(err as Error).message}`);
          setTimeout(() => this.enqueue(name), RETRY_MS).unref();
        });
      }
    } finally {
      this.working = false;
    }
  }

  private async sync(name: string): Promise<void> {
    const policy = this.informer.store.get(name);
    if (!policy || observed(policy)) return;
    const warnings = typeCheck(policy);
    const next = {
      ...policy,
      status: {
        ...(policy.status as object), observedGeneration: policy.metadata?.generation,
        typeChecking: warnings.length ? { expressionWarnings: warnings } : {},
      },
    };
    const res = await this.client.request('PUT', `${VALIDATING_ADMISSION_POLICIES}/${encodeURIComponent(name)}/status`, next);
    // A conflict means a newer generation is on its way as an event; a 404 that the policy is gone.
    if (res.status !== 200 && res.status !== 404 && res.status !== 409) throw new Error(`status update: ${res.status} ${res.body?.message ?? ''}`);
  }
}
