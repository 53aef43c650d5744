// Bundles the entry point of each service process (the built dist/cmd/<service>/main.js) into one file,
// dist/bundle/cmd/<service>/main.js, so a process starts by loading it instead of resolving and reading some
// 200 modules of ours and 700 of node_modules one by one (about a third of its start-up CPU). What a process
// imports only when it needs it is in the file but runs only then. No code splitting: across chunks, esbuild
// gives a dynamically imported CommonJS package only its default export. Source maps lead back through the
// built files to the TypeScript sources.
import { build } from 'esbuild';

const SERVICES = ['storage', 'authn', 'authz', 'admission', 'gateway', 'controller-manager'];

await build({
  entryPoints: SERVICES.map((s) => `dist/cmd/${s}/main.js`),
  outbase: 'dist',
  outdir: 'dist/bundle',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // Native addons load their binaries from beside their package; cbor-x picks its native extension at run time.
  external: ['classic-level', 'cbor-x', 'cbor-extract'],
  // The CommonJS packages bundled in call require for Node.js's own modules.
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
});
