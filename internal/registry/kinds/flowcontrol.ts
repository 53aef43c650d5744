// The flowcontrol.apiserver group (v1): FlowSchema and PriorityLevelConfiguration.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, conditionStatus, nameColumn } from '../columns.js';
import { forbidden, invalid, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asList, asObj, objects, setDefault, specOf, type Obj } from '../values.js';

/** Shares a limited priority level gets when the field is absent; an explicit 0 is kept. */
const DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30;
const DEFAULT_MATCHING_PRECEDENCE = 1000;
const MAX_MATCHING_PRECEDENCE = 10000;
const SUBJECT_MEMBERS: Record<string, string> = { User: 'user', Group: 'group', ServiceAccount: 'serviceAccount' };

function subjectCauses(field: string, s: Obj): Causes {
  const member = SUBJECT_MEMBERS[String(s.kind)];
  if (!member) return oneOf(`${field}.kind`, s.kind, Object.keys(SUBJECT_MEMBERS), true);
  const value = asObj(s[member]);
  const causes: Causes = value ? [] : [required(`${field}.${member}`, `${member} is required when subject kind is '${s.kind}'`)];
  for (const other of Object.values(SUBJECT_MEMBERS)) if (other !== member && s[other] !== undefined) causes.push(forbidden(`${field}.${other}`, `${other} is forbidden when subject kind is not '${other}'`));
  if (value && !value.name) causes.push(required(`${field}.${member}.name`));
  if (member === 'serviceAccount' && value && !value.namespace) causes.push(required(`${field}.serviceAccount.namespace`));
  return causes;
}

function ruleCauses(field: string, rule: Obj): Causes {
  const causes: Causes = [];
  const subjects = objects(rule.subjects);
  if (subjects.length === 0) causes.push(required(`${field}.subjects`, 'subjects must contain at least one value'));
  subjects.forEach((s, i) => causes.push(...subjectCauses(`${field}.subjects[${i}]`, s)));
  const resourceRules = objects(rule.resourceRules);
  const nonResourceRules = objects(rule.nonResourceRules);
  if (resourceRules.length === 0 && nonResourceRules.length === 0) causes.push(required(field, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  resourceRules.forEach((r, i) => {
    for (const f of ['verbs', 'apiGroups', 'resources']) if (asList(r[f]).length === 0) causes.push(required(`${field}.resourceRules[${i}].${f}`, `${f} must contain at least one value`));
    if (asList(r.namespaces).length === 0 && r.clusterScope !== true) causes.push(required(`${field}.resourceRules[${i}].namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
  });
  nonResourceRules.forEach((r, i) => {
    for (const f of ['verbs', 'nonResourceURLs']) if (asList(r[f]).length === 0) causes.push(required(`${field}.nonResourceRules[${i}].${f}`, `${f} must contain at least one value`));
  });
  return causes;
}

function validateFlowSchema(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = asObj(spec.priorityLevelConfiguration)?.name ? [] : [required('spec.priorityLevelConfiguration.name', 'must reference a priority level')];
  const precedence = spec.matchingPrecedence;
  if (typeof precedence === 'number' && (precedence < 1 || precedence > MAX_MATCHING_PRECEDENCE)) {
    causes.push(invalid('spec.matchingPrecedence', precedence, `must be between 1 and ${MAX_MATCHING_PRECEDENCE}, inclusive`));
  }
  const method = asObj(spec.distinguisherMethod);
  if (method) causes.push(...oneOf('spec.distinguisherMethod.type', method.type, ['ByNamespace', 'ByUser'], true));
  objects(spec.rules).forEach((r, i) => causes.push(...ruleCauses(`spec.rules[${i}]`, r)));
  return causes;
}

const flowschemas: KindSpec = {
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (spec && !spec.matchingPrecedence) spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
  },
  validate: validateFlowSchema,
  tableColumns: [nameColumn,
    column('PriorityLevel', 'string', 'The priority level that requests of this flow schema go to.', (o) => asObj(specOf(o).priorityLevelConfiguration)?.name ?? ''),
    column('MatchingPrecedence', 'string', 'Lower values are matched first.', (o) => String(specOf(o).matchingPrecedence ?? '')),
    column('DistinguisherMethod', 'string', 'How flows are told apart.', (o) => asObj(specOf(o).distinguisherMethod)?.type ?? '<none>'),
    ageColumn,
    column('MissingPL', 'string', 'Whether the priority level exists.', (o) => conditionStatus(o, 'Dangling') ?? '?')],
};

function defaultPriorityLevel(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  const limited = asObj(spec.limited);
  if (spec.type === 'Limited' && limited) {
    setDefault(limited, 'nominalConcurrencyShares', DEFAULT_NOMINAL_CONCURRENCY_SHARES);
    setDefault(limited, 'lendablePercent', 0);
    const queuing = asObj(asObj(limited.limitResponse)?.queuing);
    if (queuing) for (const [f, v] of [['handSize', 8], ['queues', 64], ['queueLengthLimit', 50]] as const) if (!queuing[f]) queuing[f] = v;
  }
  const exempt = asObj(spec.exempt);
  if (spec.type === 'Exempt' && exempt) {
    setDefault(exempt, 'nominalConcurrencyShares', 0);
    setDefault(exempt, 'lendablePercent', 0);
  }
}

function percentCauses(field: string, value: unknown): Causes {
  return typeof value === 'number' && (value < 0 || value > 100) ? [invalid(field, value, 'must be between 0 and 100, inclusive')] : [];
}

function limitedCauses(limited: Obj): Causes {
  const causes: Causes = [];
  const shares = limited.nominalConcurrencyShares;
  if (typeof shares === 'number' && shares < 0) causes.push(invalid('spec.limited.nominalConcurrencyShares', shares, 'must be a non-negative integer'));
  causes.push(...percentCauses('spec.limited.lendablePercent', limited.lendablePercent));
  if (typeof limited.borrowingLimitPercent === 'number' && limited.borrowingLimitPercent < 0) {
    causes.push(invalid('spec.limited.borrowingLimitPercent', limited.borrowingLimitPercent, 'if specified, must be a non-negative integer'));
  }
  const response = asObj(limited.limitResponse) ?? {};
  causes.push(...oneOf('spec.limited.limitResponse.type', response.type, ['Queue', 'Reject'], true));
  const queuing = asObj(response.queuing);
  if (response.type === 'Queue' && !queuing) causes.push(required('spec.limited.limitResponse.queuing', 'must not be empty if limitResponse.type is Queue'));
  if (response.type === 'Reject' && queuing) causes.push(forbidden('spec.limited.limitResponse.queuing', 'must be nil if limitResponse.type is not Limited'));
  if (queuing) {
    for (const f of ['queues', 'handSize', 'queueLengthLimit']) {
      if (typeof queuing[f] === 'number' && (queuing[f] as number) <= 0) causes.push(invalid(`spec.limited.limitResponse.queuing.${f}`, queuing[f], 'must be positive'));
    }
    if ((queuing.handSize as number) > (queuing.queues as number)) causes.push(invalid('spec.limited.limitResponse.queuing.handSize', queuing.handSize, `should not be greater than queues (${queuing.queues})`));
  }
  return causes;
}

function validatePriorityLevel(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = oneOf('spec.type', spec.type, ['Exempt', 'Limited'], true);
  if (spec.type === 'Limited') {
    if (!asObj(spec.limited)) causes.push(required('spec.limited', 'must not be empty when type is Limited'));
    else causes.push(...limitedCauses(spec.limited as Obj));
    if (spec.exempt !== undefined) causes.push(forbidden('spec.exempt', 'must be nil if the type is Limited'));
  }
  if (spec.type === 'Exempt') {
    if (spec.limited !== undefined) causes.push(forbidden('spec.limited', 'must be nil if the type is not Limited'));
    const exempt = asObj(spec.exempt) ?? {};
    if (typeof exempt.nominalConcurrencyShares === 'number' && exempt.nominalConcurrencyShares < 0) {
      causes.push(invalid('spec.exempt.nominalConcurrencyShares', exempt.nominalConcurrencyShares, 'must be a non-negative integer'));
    }
    causes.push(...percentCauses('spec.exempt.lendablePercent', exempt.lendablePercent));
  }
  return causes;
}

const queuingOf = (o: ApiObject) => asObj(asObj(asObj(specOf(o).limited)?.limitResponse)?.queuing) ?? {};

const prioritylevelconfigurations: KindSpec = {
  defaults: defaultPriorityLevel,
  validate: validatePriorityLevel,
  tableColumns: [nameColumn,
    column('Type', 'string', 'Exempt or Limited.', (o) => specOf(o).type ?? ''),
    column('NominalConcurrencyShares', 'string', 'The share of the server\'s concurrency this level is entitled to.', (o) => String(asObj(specOf(o).limited)?.nominalConcurrencyShares ?? '<none>')),
    column('Queues', 'string', 'Number of queues.', (o) => String(queuingOf(o).queues ?? '<none>')),
    column('HandSize', 'string', 'Queues a flow is dealt.', (o) => String(queuingOf(o).handSize ?? '<none>')),
    column('QueueLengthLimit', 'string', 'Requests a queue may hold.', (o) => String(queuingOf(o).queueLengthLimit ?? '<none>')),
    ageColumn],
};

export const flowcontrolKinds: Record<string, KindSpec> = { flowschemas, prioritylevelconfigurations };
