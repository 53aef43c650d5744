// One supervised child process: started, its output prefixed line by line,
// waited on until healthy, restarted when it dies after that, stopped on request.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  /** Resolves true once the child serves. */
  healthy: () => Promise<boolean>;
}

const RESTART_DELAY_MS = 1000;
const STOP_GRACE_MS = 5000;
const TAIL_LINES = 20;

export class Child {
  private proc?: ChildProcess;
  private stopping = false;
  private served = false;
  /** Set when the child exited before it served, or could not be spawned: it will not come back by itself. */
  failure?: string;
  /** The last lines the child printed, for the message when it cannot start. */
  readonly tail: string[] = [];

  constructor(readonly spec: ChildSpec) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  start(): void {
    this.failure = undefined;
    const proc = spawn(this.spec.command, this.spec.args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.log(line));
    }
    proc.on('error', (err) => {
      this.failure = `cannot start: ${err.message}`;
      this.log(this.failure);
    });
    proc.on('exit', (code, signal) => {
      if (this.stopping) return;
      // Before it ever served, a crash is a startup failure for the launcher to report, not to retry.
      if (!this.served) {
        this.failure = `exited (${signal ?? `code ${code}`})`;
        this.log(this.failure);
        return;
      }
      this.log(`exited (${signal ?? `code ${code}`}); restarting in ${RESTART_DELAY_MS} ms`);
      setTimeout(() => { if (!this.stopping) this.start(); }, RESTART_DELAY_MS);
    });
  }

  private log(line: string): void {
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    process.stdout.write(`[${this.spec.name}] ${line}\n`);
  }

  /** Polls the health check until it passes, the child ends or is stopped, or the timeout runs out. */
  async waitHealthy(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !this.stopping && this.failure === undefined) {
      if (await this.spec.healthy().catch(() => false)) {
        this.served = true;
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
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
