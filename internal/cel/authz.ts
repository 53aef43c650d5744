// Authorizer library: rules ask whether the requesting principal (or a service
// account) may perform an action, through the server's authorizer.
import { runtimeError } from './errors.js';
import { AUTHORIZER_TYPE, DECISION_TYPE, GROUP_CHECK_TYPE, PATH_CHECK_TYPE, RESOURCE_CHECK_TYPE } from './typenames.js';

export interface Principal {
  name: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** What is asked of the authorizer, for a resource or a non-resource path. */
export interface AuthorizationAttributes {
  user: Principal;
  verb: string;
  resourceRequest: boolean;
  path?: string;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  fieldSelector?: string;
  labelSelector?: string;
}

export interface AuthorizationDecision {
  decision: 'allow' | 'deny' | 'noOpinion';
  reason?: string;
  error?: string;
}

/** The value of the authorizer variable: who is asking and how to decide. */
export interface AuthorizerBinding {
  user: Principal;
  authorize(attributes: AuthorizationAttributes): AuthorizationDecision;
}

export class AuthorizerValue {
  readonly celTypeName = AUTHORIZER_TYPE;
  constructor(readonly binding: AuthorizerBinding) {}
  toJSON(): string { return this.celTypeName; }
}

export class PathCheckValue {
  readonly celTypeName = PATH_CHECK_TYPE;
  constructor(readonly authorizer: AuthorizerValue, readonly path: string) {}
  toJSON(): string { return this.celTypeName; }
}

export class GroupCheckValue {
  readonly celTypeName = GROUP_CHECK_TYPE;
  constructor(readonly authorizer: AuthorizerValue, readonly group: string) {}
  toJSON(): string { return this.celTypeName; }
}

interface ResourceFields {
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  fieldSelector: string;
  labelSelector: string;
}

export class ResourceCheckValue {
  readonly celTypeName = RESOURCE_CHECK_TYPE;
  constructor(readonly group: GroupCheckValue, readonly fields: ResourceFields) {}
  with(change: Partial<ResourceFields>): ResourceCheckValue {
    return new ResourceCheckValue(this.group, { ...this.fields, ...change });
  }
  toJSON(): string { return this.celTypeName; }
}

export class DecisionValue {
  readonly celTypeName = DECISION_TYPE;
  constructor(readonly decision: AuthorizationDecision) {}
  toJSON(): AuthorizationDecision { return this.decision; }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function path(authz: AuthorizerValue, p: string): PathCheckValue {
  if (p.trim() === '') throw runtimeError('path must not be empty');
  return new PathCheckValue(authz, p);
}

export function group(authz: AuthorizerValue, g: string): GroupCheckValue {
  return new GroupCheckValue(authz, g);
}

export function serviceAccount(authz: AuthorizerValue, namespace: string, name: string): AuthorizerValue {
  if (!DNS_SUBDOMAIN.test(name)) throw runtimeError('Invalid service account name');
  if (!DNS_LABEL.test(namespace)) throw runtimeError('Invalid service account namespace');
  const user: Principal = {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
  return new AuthorizerValue({ user, authorize: authz.binding.authorize.bind(authz.binding) });
}

export function resource(g: GroupCheckValue, r: string): ResourceCheckValue {
  if (r.trim() === '') throw runtimeError('resource must not be empty');
  return new ResourceCheckValue(g, { resource: r, subresource: '', namespace: '', name: '', fieldSelector: '', labelSelector: '' });
}

function decide(authz: AuthorizerValue, attributes: Omit<AuthorizationAttributes, 'user'>): DecisionValue {
  try {
    return new DecisionValue(authz.binding.authorize({ ...attributes, user: authz.binding.user }));
  } catch (err) {
    return new DecisionValue({ decision: 'noOpinion', error: (err as Error).message });
  }
}

export function checkPath(p: PathCheckValue, verb: string): DecisionValue {
  return decide(p.authorizer, { verb, resourceRequest: false, path: p.path });
}

export function checkResource(r: ResourceCheckValue, verb: string): DecisionValue {
  const f = r.fields;
  return decide(r.group.authorizer, {
    verb, resourceRequest: true, apiGroup: r.group.group, apiVersion: '*', resource: f.resource,
    subresource: f.subresource, namespace: f.namespace, name: f.name,
    ...(f.fieldSelector ? { fieldSelector: f.fieldSelector } : {}),
    ...(f.labelSelector ? { labelSelector: f.labelSelector } : {}),
  });
}
