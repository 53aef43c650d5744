// The authorization service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authzFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { authzService, buildAuthorizer, type Authorizer } from '../../internal/authz/index.js';

const flags = parseArgsOrExit('authz', authzFlags);
initTracing('authz');

let authorizer: Authorizer;
try {
  authorizer = buildAuthorizer(flags.list('authorization-mode'), {
    storageAddress: flags.string('storage-address'),
    natsUrl: flags.string('nats-url'),
  });
} catch (err) {
  process.stderr.write(`authz: ${(err as Error).message}\n`);
  process.exit(1);
}

await runServer('authz', flags.string('listen'), [authzService(authorizer)]);
