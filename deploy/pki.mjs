// Creates, under <data-dir>/pki, the CA, the serving, admin and controller-manager certificates
// when missing; existing ones are kept.
// authn needs the CA before it starts, so installs run this first.
import { ensurePki } from '../dist/internal/pki/index.js';

const dataDir = process.argv[2];
if (!dataDir) {
  console.error('usage: node deploy/pki.mjs <data-dir>');
  process.exit(2);
}
const paths = await ensurePki(dataDir);
console.log(`PKI ready under ${paths.dir}`);
