// The launcher that `make run` starts: every service as a child process.
import { launch, LAUNCHER_FLAGS } from '../../internal/launcher/index.js';
import { usage } from '../../internal/config/flags.js';
import { SERVICE_FLAGS } from '../../internal/config/services.js';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(usage('svc-apiserver', Object.assign({}, ...Object.values(SERVICE_FLAGS), LAUNCHER_FLAGS)));
  process.exit(0);
}
try {
  const launched = await launch(argv);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await launched.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  console.error(`svc-apiserver: ${(err as Error).message}`);
  process.exit(1);
}
