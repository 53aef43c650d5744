// The file each service process starts from: its bundle (scripts/bundle.mjs, part of `make build`), a few files
// where the built tree has some 900 modules to resolve and read, which costs a process about a third of its
// start-up CPU. The built dist/cmd/<service>/main.js runs the same code.
import { fileURLToPath } from 'node:url';
import type { ServiceName } from '../config/services.js';

export const serviceEntryPoint = (service: ServiceName): string =>
  fileURLToPath(new URL(`../../bundle/cmd/${service}/main.js`, import.meta.url));
