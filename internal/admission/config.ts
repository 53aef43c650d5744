// The --admission-control-config-file: an AdmissionConfiguration (YAML or JSON)
// that gives plugins their configuration, inline or by the path of a file of
// its own (relative to the configuration file's directory). Read strictly, as
// kube-apiserver does: an unknown apiVersion, kind or field stops the process.
// A plugin's file is read when the plugin is built, so only enabled plugins
// need theirs.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';
import { isObject } from '../apimachinery/meta.js';
import { GROUP_APISERVER_CONFIG, group, upstreamGroup } from '../names/index.js';

export const ADMISSION_CONFIGURATION = 'AdmissionConfiguration';

/** v1 in the config group; v1alpha1 in the older `apiserver` group; each in both spellings. */
export const ADMISSION_CONFIG_VERSIONS: readonly string[] = [`${GROUP_APISERVER_CONFIG}/v1`, `${group('apiserver')}/v1alpha1`]
  .flatMap((gv) => [gv, upstreamGroup(gv.slice(0, gv.indexOf('/'))) + gv.slice(gv.indexOf('/'))]);

/** A configuration file the admission service cannot start with. */
export class AdmissionFileError extends Error {}

interface PluginEntry {
  name: string;
  path: string;
  configuration?: unknown;
}

/** The configuration of each plugin the file names (the first entry of a name wins, as upstream). */
export class AdmissionConfiguration {
  constructor(private readonly plugins: PluginEntry[] = []) {}

  /** The plugin's configuration: the inline object, else its file parsed, else undefined. */
  pluginConfig(name: string): unknown {
    const entry = this.plugins.find((p) => p.name === name);
    if (!entry) return undefined;
    if (entry.configuration !== undefined) return entry.configuration;
    if (!entry.path) return undefined;
    let text: string;
    try {
      text = readFileSync(entry.path, 'utf8');
    } catch (err) {
      throw new AdmissionFileError(`couldn't open admission plugin configuration ${entry.path}: ${(err as Error).message}`);
    }
    return parseDocument(text, `admission plugin configuration ${entry.path}`);
  }
}

function parseDocument(text: string, what: string): unknown {
  try {
    return parse(text, { uniqueKeys: true });
  } catch (err) {
    throw new AdmissionFileError(`${what}: ${(err as Error).message.split('\n')[0]}`);
  }
}

const PLUGIN_FIELDS = new Set(['name', 'path', 'configuration']);

function decodePlugin(value: unknown, index: number, baseDir: string, errors: string[]): PluginEntry {
  const at = `plugins[${index}]`;
  if (!isObject(value)) {
    errors.push(`${at}: expected an object`);
    return { name: '', path: '' };
  }
  for (const key of Object.keys(value)) if (!PLUGIN_FIELDS.has(key)) errors.push(`unknown field "${at}.${key}"`);
  const text = (field: string): string => {
    const v = value[field];
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    errors.push(`${at}.${field}: expected a string`);
    return '';
  };
  const path = text('path');
  const configuration = value.configuration ?? undefined;
  if (configuration !== undefined && !isObject(configuration)) errors.push(`${at}.configuration: expected an object`);
  return { name: text('name'), path: path && resolve(baseDir, path), configuration };
}

/** Reads the file of --admission-control-config-file; an empty path gives an empty configuration. */
export function loadAdmissionConfiguration(file: string): AdmissionConfiguration {
  if (!file) return new AdmissionConfiguration();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AdmissionFileError(`unable to read admission control configuration from ${JSON.stringify(file)}: ${(err as Error).message}`);
  }
  return decodeAdmissionConfiguration(text, dirname(resolve(file)), file);
}

/** Decodes the text of an AdmissionConfiguration; relative plugin paths are taken against baseDir. */
export function decodeAdmissionConfiguration(text: string, baseDir: string, file = 'admission control configuration'): AdmissionConfiguration {
  const doc = parseDocument(text, file);
  const fail = (detail: string) => new AdmissionFileError(`${file}: ${detail}`);
  if (!isObject(doc)) throw fail('not an AdmissionConfiguration object');
  if (!doc.apiVersion) throw fail(`Object 'apiVersion' is missing`);
  if (!doc.kind) throw fail(`Object 'Kind' is missing`);
  if (doc.kind !== ADMISSION_CONFIGURATION || !ADMISSION_CONFIG_VERSIONS.includes(String(doc.apiVersion))) {
    throw fail(`no kind ${JSON.stringify(doc.kind)} is registered for version ${JSON.stringify(doc.apiVersion)}`
      + ` (expected ${ADMISSION_CONFIGURATION} in ${ADMISSION_CONFIG_VERSIONS.join(', ')})`);
  }
  const errors: string[] = [];
  for (const key of Object.keys(doc)) if (!['apiVersion', 'kind', 'plugins'].includes(key)) errors.push(`unknown field "${key}"`);
  const raw = doc.plugins ?? [];
  if (!Array.isArray(raw)) errors.push('plugins: expected a list');
  const plugins = Array.isArray(raw) ? raw.map((p, i) => decodePlugin(p, i, baseDir, errors)) : [];
  if (errors.length) throw fail(`strict decoding error: ${errors.join(', ')}`);
  return new AdmissionConfiguration(plugins);
}
