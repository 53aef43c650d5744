// The authorization service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authzFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { metricsService } from '../../internal/metrics/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { PolicyIndex } from '../../internal/rbac/index.js';
import { RBACAuthorizer } from '../../internal/rbac/authorizer.js';
import { startPolicyBootstrap } from '../../internal/rbac/reconcile.js';
import { AuthzMetrics, NodeGraphPopulator, authorizerFromFlags, authzService, type Chain } from '../../internal/authz/index.js';
import { AnswerGeneration, GenerationPublisher } from '../../internal/rpc/generation.js';
import { NATS_AUTHZ_GENERATION_SUBJECT } from '../../internal/names/index.js';

const flags = parseArgsOrExit('authz', authzFlags);
await initTracing('authz');

const generation = new AnswerGeneration();
const metrics = new AuthzMetrics();
const storage = new StorageClient(flags.string('storage-address'));
const rbac = new RBACAuthorizer(new PolicyIndex(storage).start());
rbac.onPolicyChange(() => generation.bump());
let populator: NodeGraphPopulator | undefined;
const nodeGraph = () => (populator ??= new NodeGraphPopulator(storage, () => generation.bump()).start()).graph;

let authorizer: Chain;
try {
  authorizer = authorizerFromFlags(flags, {
    storageAddress: flags.string('storage-address'), natsUrl: flags.string('nats-url'), metrics, nodeGraph, rbac,
    policyChanged: () => generation.bump(),
  });
} catch (err) {
  process.stderr.write(`authz: ${(err as Error).message}\n`);
  process.exit(1);
}
if (populator && !(await populator.waitForSync(10_000))) process.stderr.write('authz: the node graph is not synced yet; it fills in as storage answers\n');
const bootstrap = startPolicyBootstrap(storage, rbac.index);

const publisher = new GenerationPublisher(generation, { subject: NATS_AUTHZ_GENERATION_SUBJECT, program: 'authz' }).start(flags.string('nats-url'));
await runServer('authz', flags.string('listen'), [
  authzService(authorizer, { rbac, bootstrapped: bootstrap.done }, generation), metricsService(metrics.registry),
], {
  afterStop: async () => {
    authorizer.close();
    populator?.stop();
    await publisher.close();
    storage.close();
  },
});
