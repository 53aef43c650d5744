import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionFileError, decodeAdmissionConfiguration, loadAdmissionConfiguration } from '../../internal/admission/index.js';
import { GROUP_APISERVER_CONFIG, group, upstreamGroup } from '../../internal/names/index.js';

const V1 = `${GROUP_APISERVER_CONFIG}/v1`;

describe('admission control configuration file', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'admcfg-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const refusal = (text: string): string => {
    try {
      decodeAdmissionConfiguration(text, dir, 'cfg.yaml');
    } catch (err) {
      expect(err).to.be.instanceOf(AdmissionFileError);
      return (err as Error).message;
    }
    throw new Error('decoded');
  };

  it('gives a plugin its inline configuration, from YAML or JSON', () => {
    const yaml = decodeAdmissionConfiguration(`apiVersion: ${V1}\nkind: AdmissionConfiguration\nplugins:\n- name: A\n  configuration:\n    x: 1\n`, dir);
    expect(yaml.pluginConfig('A')).to.deep.equal({ x: 1 });
    expect(yaml.pluginConfig('B')).to.equal(undefined);
    const json = decodeAdmissionConfiguration(JSON.stringify({ apiVersion: V1, kind: 'AdmissionConfiguration', plugins: [{ name: 'A', configuration: { y: 'z' } }] }), dir);
    expect(json.pluginConfig('A')).to.deep.equal({ y: 'z' });
  });

  it('reads a plugin file by a path relative to the configuration file, when asked for', () => {
    mkdirSync(join(dir, 'sub'));
    write('sub/a.yaml', 'level: baseline\n');
    const file = write('admission.yaml', `apiVersion: ${V1}\nkind: AdmissionConfiguration\nplugins:\n- name: A\n  path: sub/a.yaml\n- name: Missing\n  path: nope.yaml\n`);
    const config = loadAdmissionConfiguration(file);
    expect(config.pluginConfig('A')).to.deep.equal({ level: 'baseline' });
    expect(() => config.pluginConfig('Missing')).to.throw(AdmissionFileError, /couldn't open admission plugin configuration .*nope\.yaml/);
  });

  it('accepts the versions kube-apiserver accepts, in both spellings', () => {
    for (const apiVersion of [V1, `${upstreamGroup(GROUP_APISERVER_CONFIG)}/v1`, `${group('apiserver')}/v1alpha1`, `${upstreamGroup(group('apiserver'))}/v1alpha1`]) {
      expect(decodeAdmissionConfiguration(`apiVersion: ${apiVersion}\nkind: AdmissionConfiguration\n`, dir).pluginConfig('A')).to.equal(undefined);
    }
  });

  it('refuses unknown versions and kinds, unknown fields and bad documents', () => {
    expect(refusal(`apiVersion: ${GROUP_APISERVER_CONFIG}/v2\nkind: AdmissionConfiguration\n`)).to.match(/no kind "AdmissionConfiguration" is registered for version/);
    expect(refusal(`apiVersion: ${V1}\nkind: Other\n`)).to.match(/no kind "Other"/);
    expect(refusal(`kind: AdmissionConfiguration\n`)).to.match(/'apiVersion' is missing/);
    expect(refusal(`apiVersion: ${V1}\nkind: AdmissionConfiguration\nplugin: []\n`)).to.match(/strict decoding error: unknown field "plugin"/);
    expect(refusal(`apiVersion: ${V1}\nkind: AdmissionConfiguration\nplugins:\n- name: A\n  config: {}\n`)).to.match(/unknown field "plugins\[0\]\.config"/);
    expect(refusal(`apiVersion: ${V1}\nkind: AdmissionConfiguration\nplugins: {}\n`)).to.match(/plugins: expected a list/);
    expect(refusal(`apiVersion: ${V1}\nkind: [\n`)).to.match(/^cfg\.yaml: /);
    expect(refusal(`apiVersion: ${V1}\napiVersion: ${V1}\nkind: AdmissionConfiguration\n`)).to.match(/^cfg\.yaml: /);
  });

  it('refuses a file it cannot read and answers an empty configuration without a file', () => {
    expect(() => loadAdmissionConfiguration(join(dir, 'absent.yaml'))).to.throw(AdmissionFileError, /unable to read admission control configuration from/);
    expect(loadAdmissionConfiguration('').pluginConfig('A')).to.equal(undefined);
  });
});
