// The RBAC objects as the authorizer reads them.
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  apiGroup?: string;
  namespace?: string;
}

export interface RoleRef {
  kind: string;
  name: string;
  apiGroup?: string;
}

/** The user a decision is about (the shape of authn's UserInfo). */
export interface User {
  username: string;
  groups: string[];
}

export const ALL = '*';
