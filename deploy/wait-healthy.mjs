// Waits until the gRPC service at <host:port> answers the standard health check
// with SERVING; exits 1 after [seconds] (default 60; 0 checks once). systemd runs
// it after starting a service, so units ordered after it start once it serves.
import { checkHealth } from '../dist/internal/rpc/index.js';

const [address, seconds = '60'] = process.argv.slice(2);
if (!address) {
  console.error('usage: node deploy/wait-healthy.mjs <host:port> [seconds]');
  process.exit(2);
}
const deadline = Date.now() + Number(seconds) * 1000;
for (;;) {
  if (await checkHealth(address)) process.exit(0);
  if (Date.now() >= deadline) break;
  await new Promise((resolve) => setTimeout(resolve, 250));
}
console.error(`${address} is not serving`);
process.exit(1);
