// The authorization service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authzFlags } from '../../internal/config/services.js';
import { initTracing, shutdownTracing } from '../../internal/tracing/index.js';
import { serve } from '../../internal/rpc/index.js';
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

const listen = flags.string('listen');
const server = await serve(listen, [authzService(authorizer)]).catch((err: Error) => {
  process.stderr.write(`authz: cannot listen on ${listen}: ${err.message}\n`);
  process.exit(1);
});
process.stdout.write(`authz listening on ${listen.replace(/:\d+$/, `:${server.port}`)}\n`);

const stop = async () => {
  await server.stop();
  await shutdownTracing();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
