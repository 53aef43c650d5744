// --authentication-config: read and checked at start (every error listed, the
// service does not start), then followed: a change is applied once it reads and
// checks cleanly, a bad change keeps the configuration in force and is logged.
// Reloads are counted in the upstream metrics.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { AuthenticationConfigMetrics } from '../metrics.js';
import { decodeAuthenticationConfiguration } from './decode.js';
import { aggregate, forbidden } from './fielderrors.js';
import type { AuthenticationConfiguration } from './types.js';
import { validateAuthenticationConfiguration, type CompiledRules } from './validate.js';

/** A file the service cannot start with. */
export class AuthenticationConfigError extends Error {}

export interface LoadedConfig {
  config: AuthenticationConfiguration;
  rules: CompiledRules[];
  /** The file's text, to notice changes. */
  content: string;
}

/** Checks a file's text; throws with every problem found. */
export function parseAuthenticationConfig(content: string, path: string, disallowedIssuers: string[] = []): LoadedConfig {
  let config: AuthenticationConfiguration;
  try {
    config = decodeAuthenticationConfiguration(content);
  } catch (err) {
    throw new AuthenticationConfigError(`failed to load authentication configuration from file "${path}": ${(err as Error).message}`);
  }
  const { errors, rules } = validateAuthenticationConfiguration(config, disallowedIssuers);
  if (errors.length) throw new AuthenticationConfigError(`invalid authentication configuration: ${aggregate(errors)}`);
  return { config, rules, content };
}

export function loadAuthenticationConfig(path: string, disallowedIssuers: string[] = []): LoadedConfig {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AuthenticationConfigError(`failed to load authentication configuration from file "${path}": ${(err as Error).message}`);
  }
  return parseAuthenticationConfig(content, path, disallowedIssuers);
}

export interface ReloaderOptions {
  path: string;
  initial: LoadedConfig;
  apply: (loaded: LoadedConfig) => void;
  metrics: AuthenticationConfigMetrics;
  disallowedIssuers?: string[];
  log: (message: string) => void;
  /** Changes are looked for at least this often, besides file-system events. */
  pollMs?: number;
  /** Events closer than this are one change (editors write in several steps). */
  debounceMs?: number;
}

/** Follows the file: watches its directory (the file may be replaced) and polls. */
export class AuthenticationConfigReloader {
  private tracked: string;
  private readonly anonymous: AuthenticationConfiguration['anonymous'];
  private watcher?: FSWatcher;
  private poll?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;

  constructor(private readonly opts: ReloaderOptions) {
    this.tracked = opts.initial.content;
    this.anonymous = opts.initial.config.anonymous;
    opts.metrics.recordConfig(opts.initial.content);
  }

  start(): this {
    const name = basename(this.opts.path);
    try {
      this.watcher = watch(dirname(this.opts.path), (_event, file) => { if (!file || file === name) this.schedule(); });
      this.watcher.on('error', (err) => this.opts.log(`watching authentication config file: ${err.message}`));
    } catch (err) {
      this.opts.log(`watching authentication config file: ${(err as Error).message}`);
    }
    this.poll = setInterval(() => this.reload(), this.opts.pollMs ?? 60_000);
    return this;
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.debounce);
  }

  private schedule(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.reload(), this.opts.debounceMs ?? 250);
  }

  /** Reads the file; applies it when it changed and is valid. */
  reload(): void {
    let content: string;
    try {
      content = readFileSync(this.opts.path, 'utf8');
    } catch (err) {
      // It may come back (an editor replacing it): the tracked text stays, so it is tried again.
      this.failed(`failed to read authentication config file: ${(err as Error).message}`);
      return;
    }
    if (content === this.tracked) return;
    // A file that is wrong stays wrong until it changes again.
    this.tracked = content;
    let loaded: LoadedConfig;
    try {
      loaded = parseAuthenticationConfig(content, this.opts.path, this.opts.disallowedIssuers);
    } catch (err) {
      this.failed((err as Error).message);
      return;
    }
    if (!isDeepStrictEqual(loaded.config.anonymous, this.anonymous)) {
      this.failed(`invalid authentication configuration: ${forbidden('anonymous', 'changed from initial configuration file')}`);
      return;
    }
    this.opts.apply(loaded);
    this.opts.metrics.recordReload('success');
    this.opts.metrics.recordConfig(content);
    this.opts.log('reloaded authentication config');
  }

  private failed(message: string): void {
    this.opts.metrics.recordReload('failure');
    this.opts.log(`authentication config reload failed, keeping the configuration in force: ${message}`);
  }
}
