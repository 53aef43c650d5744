// The configuration file in force: loaded at start (a bad file stops the
// start), then reloaded when it changes and every 60 seconds. A file that no
// longer loads keeps the chain in force and is logged; a good one replaces the
// chain and the policy generation moves.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import type { AuthorizerContext } from '../modes.js';
import { AuthzMetrics } from '../metrics.js';
import type { UnionAuthorizer } from '../chain.js';
import type { Attributes, Authorizer, RuleLister, RulesAnswer, UserInfo, Verdict } from '../types.js';
import { buildFromConfig } from './build.js';
import { parseAuthorizationConfig } from './file.js';

const RELOAD_INTERVAL_MS = 60_000;
/** Editors write a file in several steps: the reload waits for them to settle. */
const SETTLE_MS = 100;

export class ConfigController implements Authorizer, RuleLister {
  private current: UnionAuthorizer;
  private content: string;
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private pending?: NodeJS.Timeout;
  private readonly idHash = `sha256:${createHash('sha256').update(hostname()).digest('hex')}`;
  private readonly metrics: AuthzMetrics;

  /** Loads the file; throws when it does not load. */
  constructor(private readonly path: string, private readonly context: AuthorizerContext,
    private readonly onReload: () => void, private readonly log: (line: string) => void = console.error) {
    this.metrics = context.metrics ?? new AuthzMetrics();
    this.content = readFileSync(path, 'utf8');
    this.current = buildFromConfig(parseAuthorizationConfig(this.content), context);
  }

  authorize(attributes: Attributes): Promise<Verdict> {
    return this.current.authorize(attributes);
  }

  rulesFor(user: UserInfo, namespace: string): Promise<RulesAnswer> {
    return this.current.rulesFor(user, namespace);
  }

  /** Follows the file: changes to its folder, and a timer as a backstop. */
  start(intervalMs = RELOAD_INTERVAL_MS): this {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), (_event, file) => { if (!file || file === name) this.schedule(); });
    } catch (err) {
      this.log(`authz: cannot watch ${this.path}, reloading every ${intervalMs / 1000}s only: ${(err as Error).message}`);
    }
    this.timer = setInterval(() => void this.reload(), intervalMs);
    this.timer.unref();
    return this;
  }

  close(): void {
    this.watcher?.close();
    clearInterval(this.timer);
    clearTimeout(this.pending);
    this.current.close();
  }

  private schedule(): void {
    clearTimeout(this.pending);
    this.pending = setTimeout(() => void this.reload(), SETTLE_MS);
  }

  /** Loads the file again if its content changed; returns whether a new chain took effect. */
  async reload(): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      return this.failed(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    if (text === this.content) return false;
    let next: UnionAuthorizer;
    try {
      next = buildFromConfig(parseAuthorizationConfig(text), this.context);
    } catch (err) {
      this.content = text;
      return this.failed(`${this.path} does not load, the previous configuration stays in force:\n${(err as Error).message}`);
    }
    const previous = this.current;
    this.current = next;
    this.content = text;
    previous.close();
    this.record('success');
    this.log(`authz: reloaded the authorization configuration from ${this.path}`);
    this.onReload();
    return true;
  }

  private failed(message: string): false {
    this.record('failure');
    this.log(`authz: ${message}`);
    return false;
  }

  private record(status: 'success' | 'failure'): void {
    const labels = { status, apiserver_id_hash: this.idHash };
    this.metrics.reloads.inc(labels);
    this.metrics.reloadTimestamp.set(labels, Date.now() / 1000);
  }
}
