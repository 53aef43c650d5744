// Generates, from the gRPC APIs in proto/ and the standard health service, what the build needs in internal/rpc/gen:
// TypeScript types of the messages and services (with the `.js` import suffixes that ECMAScript modules need), and
// descriptor.json, their protobufjs reflection descriptor, from which every process builds its types at start
// instead of parsing the .proto text again.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import protobuf from 'protobufjs';
import { protoPath as healthProtoPath } from 'grpc-health-check';

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

// Field names in camelCase, as @grpc/proto-loader's keepCase: false gives them (and the types above name them).
const includeDirs = ['proto', dirname(dirname(dirname(healthProtoPath)))];
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => includeDirs.map((d) => join(d, target)).find((p) => statSync(p, { throwIfNoEntry: false })) ?? target;
root.loadSync([...protos, relative(includeDirs[1], healthProtoPath)], { keepCase: false });
root.resolveAll();
writeFileSync(join(out, 'descriptor.json'), JSON.stringify(root.toJSON()));
