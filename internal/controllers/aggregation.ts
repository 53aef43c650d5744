// ClusterRole aggregation: a ClusterRole with an aggregationRule holds the union
// of the rules of every other ClusterRole its selectors match (per selector, by
// name order, each rule once), kept current as those roles change. The
// aggregate-to-admin/edit/view labels count in either spelling.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../apimachinery/meta.js';
import { formatLabelSelector, parseLabelSelector } from '../apimachinery/selectors.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { aggregateToLabel, group, wellKnownValue } from '../names/index.js';

const CLUSTER_ROLES = `/apis/${group('rbac.authorization')}/v1/clusterroles`;
const MERGE_PATCH = 'application/merge-patch+json';
const RETRY_MS = 1000;

type Role = ApiObject & { rules?: unknown[] | null; aggregationRule?: { clusterRoleSelectors?: unknown[] } };

const AGGREGATION_LABELS = (['admin', 'edit', 'view'] as const).map(aggregateToLabel);

/** A role's labels with each aggregation label in both spellings, so a selector written either way matches. */
function withBothSpellings(labels: Record<string, string> | undefined): Record<string, string> {
  const out = { ...labels };
  for (const label of AGGREGATION_LABELS) {
    const value = wellKnownValue(labels, label);
    if (value === undefined) continue;
    out[label.own] ??= value;
    out[label.upstream] ??= value;
  }
  return out;
}

/** The rules an aggregated role should hold, given every ClusterRole. */
export function aggregatedRules(role: Role, all: Role[]): unknown[] {
  const rules: unknown[] = [];
  const sorted = [...all].sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const matches = parseLabelSelector(formatLabelSelector(selector));
    for (const other of sorted) {
      if (other.metadata?.name === role.metadata?.name || (matches && !matches(withBothSpellings(other.metadata?.labels)))) continue;
      for (const rule of other.rules ?? []) if (!rules.some((r) => isDeepStrictEqual(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

export class ClusterRoleAggregationController {
  private readonly informer: Informer;
  private scheduled = false;

  constructor(private readonly client: ApiClient) {
    const changed = () => this.schedule(0);
    this.informer = new Informer(client, CLUSTER_ROLES, { upsert: changed, deleted: changed });
  }

  async start(): Promise<void> {
    await this.informer.start();
    this.schedule(0);
  }

  stop(): void {
    this.informer.stop();
  }

  /** One pass over every aggregated role after a burst of changes. */
  private schedule(delayMs: number): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      this.syncAll().catch((err) => {
        console.error(`clusterrole-aggregation: ${(err as Error).message}`);
        this.schedule(RETRY_MS);
      });
    }, delayMs);
  }

  private async syncAll(): Promise<void> {
    const all = [...this.informer.store.values()] as Role[];
    for (const role of all) {
      if (!role.aggregationRule) continue;
      const rules = aggregatedRules(role, all);
      if (isDeepStrictEqual(rules, role.rules ?? [])) continue;
      const res = await this.client.request('PATCH', `${CLUSTER_ROLES}/${encodeURIComponent(role.metadata!.name!)}`, { rules }, MERGE_PATCH);
      if (res.status === 404) continue;
      if (res.status !== 200) throw new Error(`updating clusterrole ${role.metadata!.name}: ${res.status} ${res.body?.message ?? ''}`);
    }
  }
}
