// The authorization configuration file: every validation rule refused by its
// own failing file, defaults, the legacy-flag conflict and reloads.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { AuthzMetrics, ConfigController, NodeGraph, authorizerFromFlags, authorizerTypes, parseAuthorizationConfig } from '../../internal/authz/index.js';
import { parseFlags } from '../../internal/config/flags.js';
import { authzFlags } from '../../internal/config/services.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-authz-config-'));
const kubeconfig = join(dir, 'webhook.kubeconfig');
writeFileSync(kubeconfig, YAML.stringify({
  apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'w', cluster: { server: 'https://127.0.0.1:1/authorize' } }],
  users: [{ name: 'w', user: {} }], contexts: [{ name: 'w', context: { cluster: 'w', user: 'w' } }], 'current-context': 'w',
}));
mkdirSync(join(dir, 'a-directory'));

const webhook = (overrides: Record<string, unknown> = {}) => ({
  timeout: '3s', subjectAccessReviewVersion: 'v1', matchConditionSubjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig }, ...overrides,
});
const config = (authorizers: unknown[], top: Record<string, unknown> = {}) =>
  YAML.stringify({ apiVersion: 'apiserver.config.svc.io/v1', kind: 'AuthorizationConfiguration', authorizers, ...top });
const graph = new NodeGraph();
const context = { storageAddress: '127.0.0.1:1', natsUrl: 'nats://127.0.0.1:1', metrics: new AuthzMetrics(), nodeGraph: () => graph };

let n = 0;
/** Writes the text to a file of its own and loads it as the service does at start. */
function load(text: string): ConfigController {
  const path = join(dir, `config-${n++}.yaml`);
  writeFileSync(path, text);
  return new ConfigController(path, context, () => undefined, () => undefined);
}
const refused = (text: string) => expect(() => load(text));

describe('authorization configuration file', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<[string, string, string]> = [
    ['the apiVersion', YAML.stringify({ apiVersion: 'apiserver.config.svc.io/v9', kind: 'AuthorizationConfiguration', authorizers: [{ type: 'AlwaysAllow', name: 'a' }] }),
      'apiVersion: Unsupported value: "apiserver.config.svc.io/v9": supported values: "apiserver.config.svc.io/v1"'],
    ['the kind', config([{ type: 'AlwaysAllow', name: 'a' }], { kind: 'Other' }), 'kind: Unsupported value: "Other"'],
    ['at least one authorizer', config([]), 'authorizers: Required value: at least one authorization mode must be defined'],
    ['a type', config([{ name: 'a' }]), 'authorizers[0].type: Required value'],
    ['a known type', config([{ type: 'ABAC', name: 'a' }]), 'authorizers[0].type: Unsupported value: "ABAC": supported values: "AlwaysAllow", "AlwaysDeny", "GRPC", "Node", "RBAC", "Webhook"'],
    ['Node at most once', config([{ type: 'Node', name: 'a' }, { type: 'Node', name: 'b' }]), 'authorizers[1].type: Duplicate value: "Node"'],
    ['RBAC at most once', config([{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }]), 'authorizers[1].type: Duplicate value: "RBAC"'],
    ['a name', config([{ type: 'Node' }]), 'authorizers[0].name: Required value'],
    ['unique names', config([{ type: 'Node', name: 'x' }, { type: 'RBAC', name: 'x' }]), 'authorizers[1].name: Duplicate value: "x"'],
    ['DNS-label names', config([{ type: 'Node', name: 'Not_A_Label' }]), 'authorizers[0].name: Invalid value: "Not_A_Label": authorizer name is invalid: a lowercase RFC 1123 label'],
    ['webhook settings for a Webhook', config([{ type: 'Webhook', name: 'w' }]), 'authorizers[0].webhook: Required value: required when type=Webhook'],
    ['no webhook settings elsewhere', config([{ type: 'Node', name: 'n', webhook: webhook() }]), 'authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook'],
    ['grpc settings for a GRPC authorizer', config([{ type: 'GRPC', name: 'g' }]), 'authorizers[0].grpc: Required value: required when type=GRPC'],
    ['a timeout', config([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: undefined }) }]), 'authorizers[0].webhook.timeout: Required value'],
    ['a timeout of at most 30s', config([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '31s' }) }]), 'authorizers[0].webhook.timeout: Invalid value: "31s": must be > 0s and <= 30s'],
    ['a positive timeout', config([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '-1s' }) }]), 'authorizers[0].webhook.timeout: Invalid value: "-1s": must be > 0s and <= 30s'],
    ['a positive authorizedTTL', config([{ type: 'Webhook', name: 'w', webhook: webhook({ authorizedTTL: '-5m' }) }]), 'authorizers[0].webhook.authorizedTTL: Invalid value: "-5m": must be > 0s'],
    ['a positive unauthorizedTTL', config([{ type: 'Webhook', name: 'w', webhook: webhook({ unauthorizedTTL: '-1s' }) }]), 'authorizers[0].webhook.unauthorizedTTL: Invalid value: "-1s": must be > 0s'],
    ['a SubjectAccessReview version', config([{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: undefined }) }]), 'authorizers[0].webhook.subjectAccessReviewVersion: Required value'],
    ['a known SubjectAccessReview version', config([{ type: 'Webhook', name: 'w', webhook: webhook({ subjectAccessReviewVersion: 'v2' }) }]), 'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"'],
    ['a match condition version with match conditions', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditionSubjectAccessReviewVersion: undefined, matchConditions: [{ expression: 'true' }] }) }]),
      'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified'],
    ['match condition version v1', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' }) }]), 'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1"'],
    ['a failure policy', config([{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: undefined }) }]), 'authorizers[0].webhook.failurePolicy: Required value'],
    ['a known failure policy', config([{ type: 'Webhook', name: 'w', webhook: webhook({ failurePolicy: 'Allow' }) }]), 'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"'],
    ['a connection type', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: {} }) }]), 'authorizers[0].webhook.connectionInfo.type: Required value'],
    ['a known connection type', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'URL' } }) }]), 'authorizers[0].webhook.connectionInfo.type: Unsupported value: "URL": supported values: "InClusterConfig", "KubeConfigFile"'],
    ['no file with InClusterConfig', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'InClusterConfig', kubeConfigFile: kubeconfig } }) }]),
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: ' + JSON.stringify(kubeconfig) + ': can only be set when type=KubeConfigFile'],
    ['a file with KubeConfigFile', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile' } }) }]), 'authorizers[0].webhook.connectionInfo.kubeConfigFile: Required value'],
    ['an absolute file path', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'webhook.kubeconfig' } }) }]), 'kubeConfigFile: Invalid value: "webhook.kubeconfig": must be an absolute path'],
    ['an existing file', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: join(dir, 'nope') } }) }]), 'error loading file'],
    ['a regular file', config([{ type: 'Webhook', name: 'w', webhook: webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: join(dir, 'a-directory') } }) }]), 'must be a regular file'],
    ['at most 64 match conditions', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `request.user != 'u${i}'` })) }) }]),
      'authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items'],
    ['a match condition expression', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: ' ' }] }) }]), 'authorizers[0].webhook.matchConditions[0].expression: Required value'],
    ['unique match conditions', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] }) }]), 'authorizers[0].webhook.matchConditions[1].expression: Duplicate value: "true"'],
    ['match conditions that compile', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'request.nope == 1' }] }) }]), 'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.nope == 1": compilation failed:'],
    ['boolean match conditions', config([{ type: 'Webhook', name: 'w', webhook: webhook({ matchConditions: [{ expression: 'request.user' }] }) }]), 'must evaluate to bool'],
    ['a gRPC address', config([{ type: 'GRPC', name: 'g', grpc: { timeout: '1s', failurePolicy: 'Deny' } }]), 'authorizers[0].grpc.address: Required value'],
    ['a gRPC timeout', config([{ type: 'GRPC', name: 'g', grpc: { address: '127.0.0.1:1', failurePolicy: 'Deny' } }]), 'authorizers[0].grpc.timeout: Required value'],
    ['a gRPC client key with its certificate', config([{ type: 'GRPC', name: 'g', grpc: { address: '127.0.0.1:1', timeout: '1s', failurePolicy: 'Deny', tls: { clientCertificate: kubeconfig } } }]),
      'clientCertificate and clientKey are set together'],
  ];
  for (const [rule, text, message] of cases) {
    it(`requires ${rule}`, () => refused(text).to.throw(message));
  }

  it('lists every error of a file at once', () => {
    refused(config([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: undefined, failurePolicy: undefined }) }, { name: 'x' }]))
      .to.throw(/webhook\.timeout: Required value\n.*failurePolicy: Required value\nauthorizers\[1\]\.type: Required value/);
  });

  it('defaults the TTLs to 5m and 30s, and 0s means the default', () => {
    const [entry] = parseAuthorizationConfig(config([{ type: 'Webhook', name: 'w', webhook: webhook({ unauthorizedTTL: '0s' }) }]));
    expect(entry).to.deep.include({ type: 'Webhook', name: 'w', sarVersion: 'v1' });
    expect((entry as { remote: { authorizedTTLMs: number; unauthorizedTTLMs: number } }).remote).to.include({ authorizedTTLMs: 300_000, unauthorizedTTLMs: 30_000, timeoutMs: 3000 });
  });

  it('loads a good file, with several webhooks and gRPC authorizers', () => {
    const good = load(config([
      { type: 'Node', name: 'node' }, { type: 'Webhook', name: 'first', webhook: webhook({ matchConditions: [{ expression: "request.resourceAttributes.namespace == 'kube-system'" }] }) },
      { type: 'Webhook', name: 'second', webhook: webhook() }, { type: 'GRPC', name: 'groups', grpc: { address: '127.0.0.1:1', timeout: '1s', failurePolicy: 'NoOpinion' } },
      { type: 'AlwaysDeny', name: 'rest' },
    ]));
    good.close();
  });

  it('refuses to start with both the file and the legacy flags', () => {
    const path = join(dir, 'flags.yaml');
    writeFileSync(path, config([{ type: 'AlwaysAllow', name: 'a' }]));
    for (const legacy of ['--authorization-mode=AlwaysAllow', '--authorization-webhook-version=v1', `--authorization-webhook-config-file=${kubeconfig}`]) {
      const flags = parseFlags([`--authorization-config=${path}`, legacy], authzFlags);
      expect(() => authorizerFromFlags(flags, context)).to.throw(`--authorization-config can not be specified together with ${legacy.slice(0, legacy.indexOf('='))}`);
    }
    authorizerFromFlags(parseFlags([`--authorization-config=${path}`], authzFlags), context).close();
  });

  it('tells the other services the types it selects (the file, or the mode list)', () => {
    const path = join(dir, 'types.yaml');
    writeFileSync(path, config([{ type: 'Node', name: 'n' }, { type: 'RBAC', name: 'r' }]));
    expect(authorizerTypes(parseFlags([`--authorization-config=${path}`], authzFlags))).to.deep.equal(['Node', 'RBAC']);
    expect(authorizerTypes(parseFlags(['--authorization-mode=AlwaysAllow'], authzFlags))).to.deep.equal(['AlwaysAllow']);
    expect(authorizerTypes(parseFlags([`--authorization-config=${join(dir, 'missing.yaml')}`], authzFlags))).to.deep.equal([]);
  });

  it('reloads good, keeps the chain in force over a bad file, and takes the next good one', async () => {
    const path = join(dir, 'reload.yaml');
    writeFileSync(path, config([{ type: 'AlwaysAllow', name: 'allow' }]));
    let reloads = 0;
    const logs: string[] = [];
    const controller = new ConfigController(path, context, () => reloads++, (l) => logs.push(l));
    const attributes = { user: { username: 'u', uid: '', groups: [], extra: {} }, nonResource: { path: '/x', verb: 'get' } };
    expect((await controller.authorize(attributes)).decision).to.equal('ALLOW');
    writeFileSync(path, config([{ type: 'AlwaysAllow', name: 'Bad Name' }]));
    expect(await controller.reload()).to.equal(false);
    expect(logs.join('\n')).to.contain('does not load, the previous configuration stays in force').and.contain('authorizers[0].name: Invalid value');
    expect((await controller.authorize(attributes)).decision).to.equal('ALLOW');
    writeFileSync(path, config([{ type: 'AlwaysDeny', name: 'deny' }]));
    expect(await controller.reload()).to.equal(true);
    expect(reloads).to.equal(1);
    expect((await controller.authorize(attributes)).decision).to.equal('NO_OPINION');
    expect(await controller.reload()).to.equal(false);
    const metrics = await context.metrics.registry.metrics();
    expect(metrics).to.match(/apiserver_authorization_config_controller_automatic_reloads_total\{status="failure",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/);
    expect(metrics).to.match(/apiserver_authorization_config_controller_automatic_reloads_total\{status="success",apiserver_id_hash="sha256:[0-9a-f]+"\} 1/);
    expect(metrics).to.contain('apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds{status="success"');
    controller.close();
  });
});
