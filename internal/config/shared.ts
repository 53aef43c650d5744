// The project's shared data (`shared/` beside the repository): the schemas of
// the built-in kinds and the Protobuf field numbers. Found from the nearest
// package.json above this module, so it works from sources, from dist/ and from
// the bundles in dist/bundle/; SVC_SHARED_DIR overrides it for installs that keep
// the data elsewhere.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: the nearest directory above this module with a package.json. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the repository root (no package.json above this module)');
    dir = parent;
  }
  return dir;
}

export function sharedDir(): string {
  return process.env.SVC_SHARED_DIR || join(packageRoot(), '..', 'shared');
}

/** Reads and parses one JSON file of the shared data, e.g. `openapi/definitions.json`. */
export function readSharedJson<T>(relativePath: string): T {
  return JSON.parse(readFileSync(join(sharedDir(), relativePath), 'utf8')) as T;
}
