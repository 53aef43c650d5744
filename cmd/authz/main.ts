// The authorization service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authzFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import {
  AuthzMetrics, GenerationPublisher, NodeGraphPopulator, PolicyGeneration, authorizerFromFlags, authzService, type Authorizer,
} from '../../internal/authz/index.js';

const flags = parseArgsOrExit('authz', authzFlags);
initTracing('authz');

const generation = new PolicyGeneration();
const metrics = new AuthzMetrics();
const storage = new StorageClient(flags.string('storage-address'));
let populator: NodeGraphPopulator | undefined;
const nodeGraph = () => (populator ??= new NodeGraphPopulator(storage, () => generation.bump()).start()).graph;

let authorizer: Authorizer;
try {
  authorizer = authorizerFromFlags(flags, {
    storageAddress: flags.string('storage-address'), natsUrl: flags.string('nats-url'), metrics, nodeGraph,
    policyChanged: () => generation.bump(),
  });
} catch (err) {
  process.stderr.write(`authz: ${(err as Error).message}\n`);
  process.exit(1);
}
if (populator && !(await populator.waitForSync(10_000))) process.stderr.write('authz: the node graph is not synced yet; it fills in as storage answers\n');

const publisher = new GenerationPublisher(generation).start(flags.string('nats-url'));
await runServer('authz', flags.string('listen'), [authzService(authorizer, generation)], {
  afterStop: async () => {
    authorizer.close?.();
    populator?.stop();
    await publisher.close();
    storage.close();
  },
});
