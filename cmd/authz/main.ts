// The authorization service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authzFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { authzService, buildAuthorizer, type UnionAuthorizer } from '../../internal/authz/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { PolicyIndex } from '../../internal/rbac/index.js';
import { RBACAuthorizer } from '../../internal/rbac/authorizer.js';
import { startPolicyBootstrap } from '../../internal/rbac/reconcile.js';

const flags = parseArgsOrExit('authz', authzFlags);
initTracing('authz');

const storage = new StorageClient(flags.string('storage-address'));
const rbac = new RBACAuthorizer(new PolicyIndex(storage).start());
let authorizer: UnionAuthorizer;
try {
  authorizer = buildAuthorizer(flags.list('authorization-mode'), {
    storageAddress: flags.string('storage-address'),
    natsUrl: flags.string('nats-url'),
    rbac,
  });
} catch (err) {
  process.stderr.write(`authz: ${(err as Error).message}\n`);
  process.exit(1);
}
const bootstrap = startPolicyBootstrap(storage);

await runServer('authz', flags.string('listen'), [authzService(authorizer, { rbac, bootstrapped: bootstrap.done })]);
