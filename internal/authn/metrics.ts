// The authentication service's own metrics, named as the upstream server names
// them; the gateway's /metrics shows them through the Metrics API.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { Counter, Gauge, Registry } from 'prom-client';

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The identity of this server, as upstream derives it from the host name. */
export const apiServerId = (host = hostname()): string =>
  `apiserver-${createHash('sha256').update(host).digest('hex').slice(0, 26)}`;

export type ReloadStatus = 'success' | 'failure';

/** The metrics of the authentication configuration file controller. */
export class AuthenticationConfigMetrics {
  private readonly reloads: Counter<'status' | 'apiserver_id_hash'>;
  private readonly lastReload: Gauge<'status' | 'apiserver_id_hash'>;
  private readonly lastConfig: Gauge<'apiserver_id_hash' | 'hash'>;
  private readonly idHash: string;

  constructor(registry: Registry, apiServerID = apiServerId()) {
    this.idHash = sha256(apiServerID);
    const registers = [registry];
    const labelNames = ['status', 'apiserver_id_hash'] as const;
    this.reloads = new Counter({
      name: 'apiserver_authentication_config_controller_automatic_reloads_total',
      help: 'Total number of automatic reloads of authentication configuration split by status and apiserver identity.', labelNames, registers,
    });
    this.lastReload = new Gauge({
      name: 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
      help: 'Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.', labelNames, registers,
    });
    this.lastConfig = new Gauge({
      name: 'apiserver_authentication_config_controller_last_config_info',
      help: 'Information about the last applied authentication configuration with hash as label, split by apiserver identity.',
      labelNames: ['apiserver_id_hash', 'hash'], registers,
    });
  }

  /** The configuration now in force (its file content), replacing the one before. */
  recordConfig(content: string): void {
    this.lastConfig.reset();
    this.lastConfig.set({ apiserver_id_hash: this.idHash, hash: sha256(content) }, 1);
  }

  recordReload(status: ReloadStatus): void {
    const labels = { status, apiserver_id_hash: this.idHash };
    this.reloads.inc(labels);
    this.lastReload.set(labels, Date.now() / 1000);
  }
}
