// One supervised child process: started, its output prefixed line by line,
// waited on until healthy, restarted with backoff when it dies, stopped on request.
// A child that serves a port binds it itself and announces it; it is healthy only
// once the check passes on that announced address, and a restart is asked to bind
// the same one, which its peers were given. A child on the serving path that dies
// before it ever served is a start-up failure (the launcher reports it and stops);
// an optional child (one nothing waits for, such as the controller-manager) is
// restarted however it ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { announcedAddress } from './announce.js';

export interface ChildSpec {
  name: string;
  command: string;
  /** The arguments of a start; `address` is the one the child announced before, which a restart must bind again. */
  args: (address?: string) => string[];
  /** Resolves true once the child serves (at `address`, for a child that announces one). */
  healthy: (address?: string) => Promise<boolean>;
  /** It binds a port of its own and announces it: it is not healthy before it said where. */
  announces?: boolean;
  /** Nothing waits for it: an exit before it served is restarted too, not a start-up failure. */
  optional?: boolean;
  /** Where it serves when that is fixed by its arguments rather than announced (an etcd member). */
  address?: string;
}

/** The first restart waits this long; each quick one after it twice as long, up to the maximum. */
export const RESTART_DELAY_MS = 1000;
export const MAX_RESTART_DELAY_MS = 30_000;
/** Health polling: every 200 ms for the first 5 s of a wait, then once a second. */
const QUICK_POLL_MS = 200;
const QUICK_POLL_WINDOW_MS = 5000;
const SLOW_POLL_MS = 1000;
/** A child that ran this long before it died starts over from the first delay. */
const STABLE_RUN_MS = 60_000;
const STOP_GRACE_MS = 5000;
/** The exit code of every service refusing its flags. */
const USAGE_ERROR = 2;
const TAIL_LINES = 20;
/** How a service (`cannot listen on ...`) or nats-server says its address is taken. */
const BIND_FAILURE = /cannot listen on|address already in use|EADDRINUSE/i;

export class Child {
  private proc?: ChildProcess;
  private stopping = false;
  private served = false;
  private startedAt = 0;
  private quickRestarts = 0;
  /** Set when the child exited before it served, or could not be spawned: it will not come back by itself. */
  failure?: string;
  /** The last lines the child printed, for the message when it cannot start. */
  readonly tail: string[] = [];
  /** The lines printed by the current process only (cleared at each start), up to TAIL_LINES. */
  readonly current: string[] = [];
  /** Where it serves (`host:port` or `unix:///path`), as it announced at its first start; kept across restarts. */
  address?: string;
  /** Whether the current process announced its address yet. */
  private announced = false;

  constructor(readonly spec: ChildSpec) {
    this.address = spec.address;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get stopped(): boolean {
    return this.stopping;
  }

  start(): void {
    this.failure = undefined;
    this.current.length = 0;
    this.announced = false;
    this.startedAt = Date.now();
    const proc = spawn(this.spec.command, this.spec.args(this.address), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.log(line));
    }
    proc.on('error', (err) => {
      this.failure = `cannot start: ${err.message}`;
      this.log(this.failure);
    });
    // 'close', not 'exit': by then every line it printed was read, its reason for ending among them.
    proc.on('close', (code, signal) => this.exited(`exited (${signal ?? `code ${code}`})`, code));
  }

  private exited(how: string, code: number | null): void {
    if (this.stopping) return;
    // Before it ever served, a crash on the serving path is a start-up failure for the launcher to report, not to
    // retry; so is a flag error of any child, which would only repeat.
    if (!this.served && (!this.spec.optional || code === USAGE_ERROR)) {
      this.failure = how;
      this.log(this.failure);
      return;
    }
    if (Date.now() - this.startedAt >= STABLE_RUN_MS) this.quickRestarts = 0;
    const delay = Math.min(RESTART_DELAY_MS * 2 ** this.quickRestarts, MAX_RESTART_DELAY_MS);
    this.quickRestarts++;
    if (this.address && !this.announced && this.current.some((l) => BIND_FAILURE.test(l))) {
      this.log(`cannot bind ${this.address} again, where the other services reach it: another process holds it; retrying in ${delay} ms`);
    }
    this.log(`${how}; restarting in ${delay} ms`);
    setTimeout(() => { if (!this.stopping) this.start(); }, delay);
  }

  private log(line: string): void {
    if (this.spec.announces && !this.announced) this.learnAddress(line);
    for (const lines of [this.tail, this.current]) {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
    }
    process.stdout.write(`[${this.spec.name}] ${line}\n`);
  }

  /** The first announcement of a process: the address of the first start is the address for good. */
  private learnAddress(line: string): void {
    const announced = announcedAddress(line);
    if (!announced) return;
    this.announced = true;
    this.address ??= announced;
  }

  /** Whether the current process serves: it said where (if it announces), and the check passes there. */
  private serving(): Promise<boolean> {
    if (this.spec.announces && !this.announced) return Promise.resolve(false);
    return this.spec.healthy(this.address).catch(() => false);
  }

  /** Polls the health check until it passes, the child fails for good or is stopped, or the timeout runs out:
   * quickly while a start is young, then once a second (a child that stays unhealthy is not polled hard). */
  async waitHealthy(timeoutMs: number): Promise<boolean> {
    const start = Date.now();
    const deadline = start + timeoutMs;
    while (Date.now() < deadline && !this.stopping && this.failure === undefined) {
      if (await this.serving()) {
        this.served = true;
        return true;
      }
      const pause = Date.now() - start < QUICK_POLL_WINDOW_MS ? QUICK_POLL_MS : SLOW_POLL_MS;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    return false;
  }

  /** No restart from now on: the whole set is going down, this child in its turn. */
  retire(): void {
    this.stopping = true;
  }

  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void> {
    this.stopping = true;
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const kill = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
      proc.once('exit', () => { clearTimeout(kill); resolve(); });
      proc.kill('SIGTERM');
    });
  }
}
