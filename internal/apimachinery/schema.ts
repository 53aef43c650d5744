// An OpenAPI v3 schema node as the server reads it (the built-in definitions and
// the schemas of custom resources); `x-svc-*` markers and other keywords ride along.
export interface Schema {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
  default?: unknown;
  $ref?: string;
  [keyword: string]: unknown;
}
