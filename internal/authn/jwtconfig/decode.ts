// Reads an AuthenticationConfiguration document (YAML or JSON) strictly: the
// apiVersion and kind must be known, unknown fields and values of the wrong
// type are errors, absent fields take their zero value.
import { isObject } from '../../apimachinery/meta.js';
import { parse } from 'yaml';
import { GROUP_APISERVER_CONFIG } from '../../names/index.js';
import type { AuthenticationConfiguration } from './types.js';

export const AUTHENTICATION_CONFIGURATION = 'AuthenticationConfiguration';
export const CONFIG_VERSIONS = ['v1', 'v1beta1'].map((v) => `${GROUP_APISERVER_CONFIG}/${v}`);

/** A document that is not a readable AuthenticationConfiguration. */
export class DecodeError extends Error {}

type Shape = 'string' | 'bool' | 'optional-string' | { list: Shape } | { fields: Record<string, Shape> };

const str = 'string' as const;
const claimOrExpression: Shape = { fields: { claim: str, expression: str } };
const prefixed: Shape = { fields: { claim: str, prefix: 'optional-string', expression: str } };
const rule = (fields: Record<string, Shape>): Shape => ({ list: { fields } });

const DOCUMENT: Shape = {
  fields: {
    apiVersion: str,
    kind: str,
    jwt: {
      list: {
        fields: {
          issuer: {
            fields: {
              url: str, discoveryURL: str, certificateAuthority: str, audiences: { list: str },
              audienceMatchPolicy: str, egressSelectorType: str,
            },
          },
          claimValidationRules: rule({ claim: str, requiredValue: str, expression: str, message: str }),
          claimMappings: {
            fields: {
              username: prefixed, groups: prefixed, uid: claimOrExpression,
              extra: rule({ key: str, valueExpression: str }),
            },
          },
          userValidationRules: rule({ expression: str, message: str }),
        },
      },
    },
    anonymous: { fields: { enabled: 'bool', conditions: rule({ path: str }) } },
  },
};


/** The value for a shape, its zero value when absent; problems go to errors. */
function decodeValue(value: unknown, shape: Shape, path: string, errors: string[]): unknown {
  const absent = value === undefined || value === null;
  if (shape === 'optional-string' && absent) return undefined;
  if (shape === 'string' || shape === 'optional-string') {
    if (absent) return '';
    if (typeof value === 'string') return value;
  } else if (shape === 'bool') {
    if (absent) return false;
    if (typeof value === 'boolean') return value;
  } else if ('list' in shape) {
    if (absent) return [];
    if (Array.isArray(value)) return value.map((v, i) => decodeValue(v, shape.list, `${path}[${i}]`, errors));
  } else {
    const given = absent ? {} : value;
    if (isObject(given)) {
      for (const key of Object.keys(given)) if (!(key in shape.fields)) errors.push(`unknown field "${path ? `${path}.` : ''}${key}"`);
      return Object.fromEntries(Object.entries(shape.fields).map(([key, s]) => [key, decodeValue(given[key], s, path ? `${path}.${key}` : key, errors)]));
    }
  }
  const wanted = typeof shape === 'string' ? shape.replace('optional-', '') : 'list' in shape ? 'list' : 'object';
  errors.push(`${path}: cannot decode ${Array.isArray(value) ? 'list' : typeof value} as ${wanted}`);
  return undefined;
}

/** Parses the text of a configuration file. */
export function decodeAuthenticationConfiguration(text: string): AuthenticationConfiguration {
  if (text.trim() === '') throw new DecodeError('empty config data');
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new DecodeError((err as Error).message);
  }
  if (!isObject(raw)) throw new DecodeError('the configuration must be an object');
  const { apiVersion, kind } = raw;
  if (typeof apiVersion !== 'string' || !CONFIG_VERSIONS.includes(apiVersion)) {
    throw new DecodeError(`no kind "${String(kind)}" is registered for version "${String(apiVersion)}"; supported versions: ${CONFIG_VERSIONS.join(', ')}`);
  }
  if (kind !== AUTHENTICATION_CONFIGURATION) throw new DecodeError(`no kind "${String(kind)}" is registered for version "${apiVersion}"`);
  const errors: string[] = [];
  const decoded = decodeValue(raw, DOCUMENT, '', errors) as AuthenticationConfiguration & { apiVersion?: string; kind?: string };
  if (errors.length) throw new DecodeError(`strict decoding error: ${errors.join(', ')}`);
  const anonymous = raw.anonymous === undefined || raw.anonymous === null ? undefined : decoded.anonymous;
  return { jwt: decoded.jwt, ...(anonymous ? { anonymous } : {}) };
}
