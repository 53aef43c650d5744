// Runs the kubectl 1.33 binary that sits beside the one `kubectl` resolves to.
import { execFileSync, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The path of kubectl 1.33, or undefined when the machine has none. */
export function kubectlPath(): string | undefined {
  try {
    const resolved = realpathSync(execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim());
    return join(dirname(resolved), 'kubectl.1.33');
  } catch {
    return undefined;
  }
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with a kubeconfig, optionally feeding stdin; killed after timeoutMs. */
export function kubectl(kubeconfig: string, args: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
  const bin = kubectlPath();
  if (!bin) throw new Error('kubectl 1.33 is not installed');
  return new Promise((resolve) => {
    const proc = spawn(bin, args, { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += d; });
    proc.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    proc.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    proc.stdin.end(opts.stdin ?? '');
  });
}
