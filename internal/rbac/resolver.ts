// Which rules apply to a user at a scope: every ClusterRoleBinding naming the
// user, then (in a namespace) every RoleBinding there, each with the rules of
// its role. A visitor sees each rule with where it came from and may stop early.
import type { Binding, PolicyIndex } from './index.js';
import type { PolicyRule, Subject, User } from './types.js';

const SA_PREFIX = 'system:serviceaccount:';

/** Whether a binding's subject is the user; a ServiceAccount without a namespace is of the binding's namespace. */
export function appliesTo(user: User, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case 'User': return user.username === subject.name;
    case 'Group': return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return ns !== '' && user.username === `${SA_PREFIX}${ns}:${subject.name}`;
    }
    default: return false;
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** `ClusterRoleBinding "b" of ClusterRole "r" to User "u"`, as the allow reason names it. */
function describe(b: Binding, s: Subject): string {
  const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name;
  return `${b.kind} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(s, b.namespace)}`;
}

/** Sees a rule (or the error of a binding whose role is missing); returns false to stop. */
export type Visitor = (source: string, rule: PolicyRule | undefined, err: Error | undefined) => boolean;

export class RuleResolver {
  constructor(private readonly index: PolicyIndex) {}

  /** Visits the rules that apply to `user` at the cluster scope and, with a namespace, in it. */
  visitRulesFor(user: User, namespace: string, visit: Visitor): void {
    for (const b of this.bindingsAt(namespace)) {
      const subject = b.subjects.find((s) => appliesTo(user, s, b.namespace));
      if (!subject) continue;
      let rules: PolicyRule[];
      try {
        rules = this.index.roleRules(b.roleRef, b.namespace);
      } catch (err) {
        if (!visit('', undefined, err as Error)) return;
        continue;
      }
      const source = describe(b, subject);
      for (const rule of rules) if (!visit(source, rule, undefined)) return;
    }
  }

  /** The ClusterRoleBindings, then with a namespace its RoleBindings, without copying either. */
  private *bindingsAt(namespace: string): Iterable<Binding> {
    yield* this.index.clusterRoleBindings();
    if (namespace) yield* this.index.roleBindingsIn(namespace);
  }

  /** Every rule that applies, and the errors met (the rules are then incomplete). */
  rulesFor(user: User, namespace: string): { rules: PolicyRule[]; errors: Error[] } {
    const rules: PolicyRule[] = [];
    const errors: Error[] = [];
    this.visitRulesFor(user, namespace, (_s, rule, err) => {
      if (rule) rules.push(rule);
      if (err) errors.push(err);
      return true;
    });
    return { rules, errors };
  }
}

/** Several errors as one message: one alone, or `[a, b]`, as the platform joins them. */
export function aggregateMessage(errors: Error[]): string {
  const messages = [...new Set(errors.map((e) => e.message))];
  return messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
}
