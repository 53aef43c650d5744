// Runs the authorization service with flags it must refuse: resolves with its
// exit code and error output, killing it by PID if it is still up after 20 s.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const AUTHZ = fileURLToPath(new URL('../../cmd/authz/main.js', import.meta.url));

export function authzExit(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [AUTHZ, '--listen=127.0.0.1:0', '--storage-address=127.0.0.1:1', '--nats-url=nats://127.0.0.1:1', ...args],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr += String(d); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });
}
