// Creates, under <data-dir>/pki, the CA, the serving, admin and controller-manager certificates
// when missing; existing ones are kept.
// authn needs the CA before it starts, so installs run this first.
import { ensurePki } from '../dist/internal/pki/index.js';

const dataDir = process.argv[2];
if (!dataDir) {
  console.error('usage: node deploy/pki.mjs <data-dir> [host ...]');
  process.exit(2);
}
// Further arguments: addresses or names the serving certificate must cover besides the loopback ones
// (every gateway of a replicated API, its load balancer), so that one certificate serves them all.
const paths = await ensurePki(dataDir, { servingHosts: process.argv.slice(3) });
console.log(`PKI ready under ${paths.dir}`);
