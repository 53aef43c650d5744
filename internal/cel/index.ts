// The expression language of the server, shared by every feature that evaluates
// expressions: custom-resource validation rules (self, oldSelf), token claim
// rules (claims), user validation rules (user) and authorizer match conditions
// (request).
export { compile, Program, type CompileOptions, type EvalOptions, type EvalResult } from './compile.js';
export { declare, type DeclarationOptions, ACCESS_REVIEW_SCHEMA, USER_INFO_SCHEMA } from './declarations.js';
export { CostBudget } from './budget.js';
export type { CostEstimate, MissingBound } from './estimate.js';
export { estimateMessage } from './estimate.js';
export {
  PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './cost.js';
export { CompileError, CostLimitError, EvalError } from './errors.js';
export { escapeProperty, unescapeProperty } from './escaping.js';
export { type Schema, INT_OR_STRING, PRESERVE_UNKNOWN_FIELDS, EMBEDDED_RESOURCE, MAX_REQUEST_SIZE_BYTES, minSerializedSize } from './schema.js';
export { SERVING_RELEASE, compareReleases } from './release.js';
export { fromJson, stringifyValue } from './values.js';
export type { AuthorizerBinding, AuthorizationAttributes, AuthorizationDecision, Principal } from './authz.js';
