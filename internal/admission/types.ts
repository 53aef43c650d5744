// The shapes every admission plugin shares: the decoded request, the answer of
// a plugin and the refusal it throws.
import type { UserInfo__Output as UserInfo } from '../rpc/gen/svc/authn/v1/UserInfo.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
export type JsonObject = Record<string, unknown>;

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subresource: string;
  name: string;
  /** Empty for cluster-scoped kinds. */
  namespace: string;
  operation: Operation;
  user: UserInfo;
  /** The object as it would be stored; undefined for DELETE. */
  object?: JsonObject;
  /** The stored object; undefined for CREATE. */
  oldObject?: JsonObject;
  dryRun: boolean;
  options?: JsonObject;
  /** What the client asked for (absent: kind, resource and subresource), which the object's version may differ from. */
  requestKind?: { group: string; version: string; kind: string };
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
}

export interface Cause {
  type: string;
  message: string;
  field: string;
}

/** A refused write, answered with an HTTP status, a Status reason, a message and causes. */
export class AdmissionError extends Error {
  /** Warnings and audit annotations gathered before the refusal, which the client and the audit log still get. */
  warnings: string[] = [];
  auditAnnotations: Record<string, string> = {};

  constructor(readonly code: number, readonly reason: string, message: string, readonly causes: Cause[] = []) {
    super(message);
  }
}

/** What a plugin may add to an admitted request. */
export interface PluginAnswer {
  /** The mutated object (mutating plugins only). */
  object?: JsonObject;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export type Phase = 'mutating' | 'validating';

/**
 * What a plugin that calls webhooks or policies keeps for one request: which of them (by a key of its own) ran
 * with reinvocationPolicy IfNeeded, and which a later change to the object marked to run again.
 */
export interface ReinvocationTracker {
  /** Whether the invocation runs in this pass: any in the first; in the second, only those marked to run again. */
  shouldRun(key: string): boolean;
  /** Records that the invocation ran and whether it changed the object (a change asks for a second pass). */
  ran(key: string, changed: boolean, ifNeeded: boolean): void;
}

/**
 * One request's reinvocation context: the mutating phase runs a second time when a webhook or policy changed
 * the object, the in-tree plugins again and, of the webhooks and policies, only those marked to run again.
 */
export interface Reinvocation {
  /** True in the second pass. */
  readonly reinvoking: boolean;
  /** The calling plugin's tracker for this request. */
  tracker(plugin: string): ReinvocationTracker;
}

/** One admission plugin. admit() refuses by throwing an AdmissionError. */
export interface AdmissionPlugin {
  readonly name: string;
  readonly phase: Phase;
  handles(operation: Operation): boolean;
  /**
   * Mutating plugins may run twice for a request (in-tree ones must then leave their own result as it is).
   * reinvocation: the request's, from the chain; absent when the plugin is called alone (one pass).
   */
  admit(request: AdmissionRequest, reinvocation?: Reinvocation): Promise<PluginAnswer | void>;
  /** Ends what the plugin keeps running (Reflectors), when the service stops. */
  stop?(): void;
}
