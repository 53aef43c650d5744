// Puts the user commands in ./bin as small launchers of their built entry points, run by the Node.js
// that built them (make's: the system's 22+ or the pinned one in .runtime/).
import { mkdirSync, writeFileSync, chmodSync, existsSync } from 'node:fs';

const commands = { 'svc-apiserver': 'cmd/svc-apiserver/main.js', 'svc-cel': 'cmd/svc-cel/main.js' };
mkdirSync('bin', { recursive: true });
for (const [name, entry] of Object.entries(commands)) {
  if (!existsSync(`dist/${entry}`)) continue;
  const path = `bin/${name}`;
  writeFileSync(path, `#!/bin/sh\nexec '${process.execPath}' "$(dirname "$0")/../dist/${entry}" "$@"\n`);
  chmodSync(path, 0o755);
}
