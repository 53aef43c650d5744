// Generates TypeScript types of the gRPC APIs in proto/ into internal/rpc/gen,
// with the `.js` import suffixes that ECMAScript modules need.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const out = 'internal/rpc/gen';
const files = (dir) => readdirSync(dir).flatMap((f) => {
  const p = join(dir, f);
  return statSync(p).isDirectory() ? files(p) : [p];
});

rmSync(out, { recursive: true, force: true });
const protos = files('proto').filter((f) => f.endsWith('.proto')).map((f) => relative('proto', f));
execFileSync(process.execPath, ['node_modules/.bin/proto-loader-gen-types', '--longs=Number', '--enums=String', '--defaults', '--oneofs',
  '--grpcLib=@grpc/grpc-js', '--includeDirs=proto', `--outDir=${out}`, ...protos], { stdio: 'inherit' });
for (const f of files(out).filter((f) => f.endsWith('.ts'))) {
  const src = readFileSync(f, 'utf8').replace(/from '(\.[^']+)'/g, "from '$1.js'");
  writeFileSync(f, src);
}
