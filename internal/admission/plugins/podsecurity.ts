// PodSecurity: the Pod Security Standards a namespace's labels ask for.
// Enforce refuses a Pod that violates its level (403); warn answers a Warning;
// audit adds an audit annotation. Workload templates (Deployments, Jobs, ...)
// are only warned and audited: their Pods are enforced when created. Namespace
// labels are validated, and raising a namespace's enforce level warns about
// the existing Pods that would violate it. Namespaces come from memory.
import type { StorageClient } from '../../storage/client.js';
import { podSecurityKey } from '../../names/index.js';
import { PodSecurityConfigError, decodePodSecurityConfiguration, type PodSecurityConfiguration } from '../../podsecurity/config.js';
import { Evaluator } from '../../podsecurity/evaluator.js';
import type { Json } from '../../podsecurity/check.js';
import { PodSecurityMetrics, type RequestLabels } from '../../podsecurity/metrics.js';
import {
  PRIVILEGED_LATEST, compareLevels, equivalentPolicy, fullyPrivileged, labelErrorField, labelErrorMessage, levelVersionString,
  policyLabel, policyToEvaluate, type LabelError, type LevelVersion, type Policy,
} from '../../podsecurity/policy.js';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type JsonObject, type Operation, type PluginAnswer } from '../types.js';
import { forbidden, internalError } from '../errors.js';
import type { NamespaceCache } from '../namespaces.js';
import type { Registry } from 'prom-client';
import { namespacePodWarnings, storagePodLister, type PodLister } from './podsecurity-namespace.js';

export const POD_SECURITY = 'PodSecurity';

/** Pod subresources that change nothing the policy judges. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** The kinds holding a pod template, by `group/resource`, and where the template is. */
const TEMPLATES: Record<string, (obj: Json) => Json | undefined> = {
  '/replicationcontrollers': (o) => o.spec?.template,
  '/podtemplates': (o) => o.template,
  'apps/replicasets': (o) => o.spec?.template,
  'apps/deployments': (o) => o.spec?.template,
  'apps/statefulsets': (o) => o.spec?.template,
  'apps/daemonsets': (o) => o.spec?.template,
  'batch/jobs': (o) => o.spec?.template,
  'batch/cronjobs': (o) => o.spec?.jobTemplate?.spec?.template,
};

const annotationKey = (key: string): string => podSecurityKey(key).own;
const labelsOf = (obj: JsonObject | undefined): Record<string, string> => ((obj?.metadata as Json | undefined)?.labels ?? {}) as Record<string, string>;
const exemptAnswer = (reason: string): PluginAnswer => ({ auditAnnotations: { [annotationKey('exempt')]: reason } });

export class PodSecurity implements AdmissionPlugin {
  readonly name = POD_SECURITY;
  readonly phase = 'validating' as const;
  private readonly evaluator = new Evaluator();
  private readonly metrics: PodSecurityMetrics;

  constructor(private readonly config: PodSecurityConfiguration, private readonly namespaces: Pick<NamespaceCache, 'get'>,
    private readonly pods: PodLister, registry?: Registry) {
    this.metrics = new PodSecurityMetrics(registry);
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    const { group: g, resource } = request.resource;
    if (g === '' && resource === 'namespaces') return this.namespace(request);
    if (g === '' && resource === 'pods') return this.pod(request);
    const template = TEMPLATES[`${g}/${resource}`];
    if (template) return this.controller(request, template);
  }

  private policyOf(labels: Record<string, string> | undefined) {
    return policyToEvaluate(labels, this.config.defaults);
  }

  private exemptNamespace = (ns: string): boolean => ns !== '' && this.config.exemptions.namespaces.includes(ns);
  private exemptUser = (name: string): boolean => name !== '' && this.config.exemptions.usernames.includes(name);

  private async namespace(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (request.subresource) return;
    const name = request.name || String((request.object?.metadata as Json | undefined)?.name ?? '');
    const labels = labelsOf(request.object);
    const { policy, errors } = this.policyOf(labels);
    if (request.operation === 'CREATE') {
      if (errors.length) throw invalidNamespace(name, errors);
      return this.exemptNamespaceWarning(name, policy, labels);
    }
    const old = this.policyOf(labelsOf(request.oldObject));
    if (errors.length && (!old.errors.length || JSON.stringify(errors) !== JSON.stringify(old.errors))) throw invalidNamespace(name, errors);
    const [next, prev] = [policy.enforce, old.policy.enforce];
    if (next.level === prev.level && next.version === prev.version) return;
    if (next.level === 'privileged') return;
    if (next.version === prev.version && compareLevels(next.level, prev.level) < 1) return;
    if (this.exemptNamespace(name)) return this.exemptNamespaceWarning(name, policy, labels);
    return { warnings: await namespacePodWarnings(this.pods, this.evaluator, name, next, this.config.exemptions.runtimeClasses) };
  }

  /** An exempt namespace with a policy of its own is told the policy is ignored. */
  private exemptNamespaceWarning(name: string, policy: Policy, labels: Record<string, string>): PluginAnswer | void {
    if (!this.exemptNamespace(name) || fullyPrivileged(policy) || equivalentPolicy(policy, this.config.defaults)) return;
    const parts = (['enforce', 'audit', 'warn'] as const)
      .filter((m) => policy[m].level !== 'privileged' && (policyLabel(labels, m) || policyLabel(labels, `${m}-version`)))
      .map((m) => `${m}=${levelVersionString(policy[m])}`);
    return { warnings: [`namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`] };
  }

  private async pod(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (IGNORED_POD_SUBRESOURCES.has(request.subresource)) return;
    const labels = this.requestLabels(request, 'pod');
    const exempt = this.exemption(request, labels);
    if (exempt) return exempt;
    // A storage failure reaches the chain, which answers 503 when storage is unreachable.
    const namespace = await this.namespaces.get(request.namespace).catch((err: unknown) => { this.metrics.error(true, labels); throw err; });
    if (!namespace) {
      this.metrics.error(true, labels);
      throw internalError(`failed to lookup namespace ${JSON.stringify(request.namespace)}`);
    }
    const { policy, errors } = this.policyOf(namespace.namespace.metadata?.labels);
    if (!errors.length && fullyPrivileged(policy)) {
      this.metrics.evaluation('allow', policy.enforce, 'enforce', labels);
      return { auditAnnotations: { [annotationKey('enforce-policy')]: levelVersionString(PRIVILEGED_LATEST) } };
    }
    const pod = (request.object ?? {}) as Json;
    if (request.operation === 'UPDATE' && !significantUpdate(pod, (request.oldObject ?? {}) as Json)) return;
    return this.evaluate(request, labels, policy, errors, pod.metadata ?? {}, pod.spec ?? {}, true);
  }

  private async controller(request: AdmissionRequest, template: (obj: Json) => Json | undefined): Promise<PluginAnswer | void> {
    if (request.subresource) return;
    const labels = this.requestLabels(request, 'controller');
    const exempt = this.exemption(request, labels);
    if (exempt) return exempt;
    let namespace;
    try {
      namespace = await this.namespaces.get(request.namespace);
      if (!namespace) throw new Error('not found');
    } catch (err) {
      this.metrics.error(true, labels);
      return { auditAnnotations: { [annotationKey('error')]: `failed to lookup namespace ${JSON.stringify(request.namespace)}: ${(err as Error).message}` } };
    }
    const { policy, errors } = this.policyOf(namespace.namespace.metadata?.labels);
    if (!errors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const podTemplate = template((request.object ?? {}) as Json);
    if (!podTemplate) return;
    return this.evaluate(request, labels, policy, errors, podTemplate.metadata ?? {}, podTemplate.spec ?? {}, false);
  }

  private exemption(request: AdmissionRequest, labels: RequestLabels): PluginAnswer | undefined {
    const reason = this.exemptNamespace(request.namespace) ? 'namespace' : this.exemptUser(request.user?.username ?? '') ? 'user' : undefined;
    if (!reason) return undefined;
    this.metrics.exemption(labels);
    return exemptAnswer(reason);
  }

  /** Judges a pod (or template) in enforce (pods only), audit and warn mode; each level:version once. */
  private evaluate(request: AdmissionRequest, labels: RequestLabels, policy: Policy, errors: LabelError[],
    metadata: Json, spec: Json, enforce: boolean): PluginAnswer {
    const runtimeClass = typeof spec.runtimeClassName === 'string' ? spec.runtimeClassName : '';
    if (runtimeClass && this.config.exemptions.runtimeClasses.includes(runtimeClass)) {
      this.metrics.exemption(labels);
      return exemptAnswer('runtimeClass');
    }
    const audit: Record<string, string> = {};
    if (errors.length) {
      audit[annotationKey('error')] = `Failed to parse policy: ${aggregate(errors.map((e) => `${labelErrorField(e)}: ${labelErrorMessage(e)}`))}`;
      this.metrics.error(false, labels);
    }
    const results = new Map<string, ReturnType<Evaluator['evaluate']>>();
    const judge = (lv: LevelVersion) => {
      const key = levelVersionString(lv);
      if (!results.has(key)) results.set(key, this.evaluator.evaluate(lv, metadata, spec));
      return results.get(key)!;
    };
    if (enforce) {
      audit[annotationKey('enforce-policy')] = levelVersionString(policy.enforce);
      const result = judge(policy.enforce);
      this.metrics.evaluation(result.allowed ? 'allow' : 'deny', policy.enforce, 'enforce', labels);
      if (!result.allowed) {
        const name = request.name || String(metadata.name ?? '');
        throw forbidden(request.resource, name, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${result.detail()}`);
      }
    }
    const audited = judge(policy.audit);
    if (!audited.allowed) {
      audit[annotationKey('audit-violations')] = `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${audited.detail()}`;
      this.metrics.evaluation('deny', policy.audit, 'audit', labels);
    }
    const warnings: string[] = [];
    const warned = judge(policy.warn);
    if (!warned.allowed) {
      warnings.push(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${warned.detail()}`);
      this.metrics.evaluation('deny', policy.warn, 'warn', labels);
    }
    return { warnings, auditAnnotations: audit };
  }

  private requestLabels(request: AdmissionRequest, resource: RequestLabels['resource']): RequestLabels {
    return { operation: request.operation, resource, subresource: request.subresource };
  }
}

/** Several errors as the platform's aggregate words them: one alone, several in brackets. */
const aggregate = (texts: string[]): string => (texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`);

/** `Namespace "x" is invalid: metadata.labels[...]: Invalid value: ...` */
function invalidNamespace(name: string, errors: LabelError[]): AdmissionError {
  const causes = errors.map((e) => ({ type: 'FieldValueInvalid', message: labelErrorMessage(e), field: labelErrorField(e) }));
  return new AdmissionError(422, 'Invalid', `Namespace ${JSON.stringify(name)} is invalid: ${aggregate(causes.map((c) => `${c.field}: ${c.message}`))}`, causes);
}

const containerList = (spec: Json | undefined, field: string): Json[] => (Array.isArray(spec?.[field]) ? spec![field] : []);

/** Only a change of image or of the number of containers, or a new ephemeral container, is judged again. */
function significantUpdate(pod: Json, old: Json): boolean {
  for (const field of ['containers', 'initContainers']) {
    const [now, before] = [containerList(pod.spec, field), containerList(old.spec, field)];
    if (now.length !== before.length || now.some((c, i) => c?.image !== before[i]?.image)) return true;
  }
  const previous = containerList(old.spec, 'ephemeralContainers');
  return containerList(pod.spec, 'ephemeralContainers').some((c) => {
    const match = previous.find((o) => o?.name === c?.name);
    return !match || match.image !== c?.image;
  });
}

/** Builds the plugin from its configuration (none: privileged everywhere, nothing exempt). */
export function podSecurityPlugin(config: unknown, namespaces: Pick<NamespaceCache, 'get'>, storage: Pick<StorageClient, 'list'>, registry?: Registry): PodSecurity {
  let decoded: PodSecurityConfiguration;
  try {
    decoded = decodePodSecurityConfiguration(config);
  } catch (err) {
    throw new PodSecurityConfigError(`${POD_SECURITY} configuration: ${(err as Error).message}`);
  }
  return new PodSecurity(decoded, namespaces, storagePodLister(storage), registry);
}
