// An external authorizer: allows every request of a user in one of the groups
// listed in a file (one group a line, `#` comments), has no opinion otherwise.
// It serves svc.authz.v1.Authorization/Authorize from the public proto, as a
// program in any language could, and is consulted where the authorization
// configuration file puts an authorizer of type GRPC.
//
//   node dist/examples/group-authorizer/main.js --groups-file=groups.txt --listen=127.0.0.1:7100 \
//     [--tls-cert-file=server.pem --tls-private-key-file=server-key.pem [--client-ca-file=ca.pem]]
import { readFileSync, watchFile } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO_DIR = fileURLToPath(new URL('../../../proto', import.meta.url));

interface AuthorizeRequest {
  user?: { username: string; groups: string[] };
  resource?: { verb: string; resource: string; namespace: string; name: string };
  nonResource?: { verb: string; path: string };
}

const { values: flags } = parseArgs({
  options: {
    'groups-file': { type: 'string' },
    listen: { type: 'string', default: '127.0.0.1:7100' },
    'tls-cert-file': { type: 'string' },
    'tls-private-key-file': { type: 'string' },
    'client-ca-file': { type: 'string' },
  },
});
if (!flags['groups-file']) {
  process.stderr.write('group-authorizer: --groups-file is required\n');
  process.exit(2);
}
const groupsFile = flags['groups-file'];

/** The allowed groups, read again whenever the file changes. */
let allowed = new Set<string>();
function readGroups(): void {
  try {
    allowed = new Set(readFileSync(groupsFile, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
  } catch (err) {
    process.stderr.write(`group-authorizer: cannot read ${groupsFile}: ${(err as Error).message}\n`);
  }
}
readGroups();
watchFile(groupsFile, { interval: 500 }, readGroups);

function authorize(call: grpc.ServerUnaryCall<AuthorizeRequest, unknown>, reply: grpc.sendUnaryData<unknown>): void {
  const user = call.request.user ?? { username: '', groups: [] };
  const group = user.groups.find((g) => allowed.has(g));
  const what = call.request.resource ? `${call.request.resource.verb} ${call.request.resource.resource}` : `${call.request.nonResource?.verb} ${call.request.nonResource?.path}`;
  process.stdout.write(`authorize user=${JSON.stringify(user.username)} ${what} -> ${group ? 'ALLOW' : 'NO_OPINION'}\n`);
  reply(null, group ? { decision: 'ALLOW', reason: `member of ${group}` } : { decision: 'NO_OPINION', reason: 'no allowed group' });
}

function credentials(): grpc.ServerCredentials {
  const cert = flags['tls-cert-file'];
  const key = flags['tls-private-key-file'];
  if (!cert || !key) return grpc.ServerCredentials.createInsecure();
  const ca = flags['client-ca-file'] ? readFileSync(flags['client-ca-file']) : null;
  return grpc.ServerCredentials.createSsl(ca, [{ cert_chain: readFileSync(cert), private_key: readFileSync(key) }], Boolean(ca));
}

const definition = protoLoader.loadSync('svc/authz/v1/authz.proto', { includeDirs: [PROTO_DIR], keepCase: false, enums: String, defaults: true });
const api = grpc.loadPackageDefinition(definition) as any;
const server = new grpc.Server();
server.addService(api.svc.authz.v1.Authorization.service, { Authorize: authorize });
server.bindAsync(flags.listen!, credentials(), (err, port) => {
  if (err) {
    process.stderr.write(`group-authorizer: cannot listen on ${flags.listen}: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`group-authorizer listening on ${flags.listen!.slice(0, flags.listen!.lastIndexOf(':'))}:${port}\n`);
});
const stop = () => server.tryShutdown(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
