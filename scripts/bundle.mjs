// After tsc: each bin's program as one CommonJS file, dist/bundle/<bin>.cjs (with its source map).
// One file starts faster than ~600 modules (no resolution, no ESM linking, no CommonJS export
// scanning; zod's unused locales are dropped), and src/cli/run-bundle.ts can keep V8's code
// cache for it. Two folders deep like every other dist file, so paths relative to
// import.meta.url (assets/, package.json) stay right.
import { build } from 'esbuild';
import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';

const BINS = ['agent-kernel', 'kernel-runner'];
// Code caches of the bundles this build replaces (src/cli/run-bundle.ts writes them).
mkdirSync('dist/bundle', { recursive: true });
for (const name of readdirSync('dist/bundle', { withFileTypes: true }).filter((e) => e.isFile() && /\.v8cache$|\.tmp$/.test(e.name)).map((e) => e.name)) {
  rmSync(`dist/bundle/${name}`);
}

// dockerode and docker-modem load gRPC with protobuf (BuildKit sessions, which we never open) and
// ssh2 (ssh:// engines only) up front; in the bundle each is a function that requires the real
// module from node_modules on its first call, as src/sandbox/engine/dockerode.ts does for the unbundled build.
const LAZY = { 'dockerode/lib/docker.js': ['./session', 'dockerode/lib/session.js'], 'docker-modem/lib/modem.js': ['./ssh', 'docker-modem/lib/ssh.js'] };
const lazyFunctionModules = {
  name: 'lazy-function-modules',
  setup(build) {
    build.onResolve({ filter: /^\.\/(session|ssh)$/ }, ({ path, importer }) => {
      const entry = Object.entries(LAZY).find(([from, [request]]) => importer.endsWith(`node_modules/${from}`) && request === path);
      return entry && { path: entry[1][1], namespace: 'lazy' };
    });
    // BuildKit's protobuf definitions: dockerode already requires them only inside buildImage; leave them out.
    build.onResolve({ filter: /^\.\/buildkit$/ }, ({ importer }) =>
      importer.endsWith('node_modules/dockerode/lib/docker.js') ? { path: 'dockerode/lib/buildkit.js', external: true } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy' }, ({ path }) => ({
      contents: `let real; module.exports = function (...args) { real ??= require(${JSON.stringify(path)}); return real.apply(this, args); };`,
      loader: 'js',
    }));
    // The bundle's own copy of dockerode (the stand-in's require above is left to Node at run time).
    build.onLoad({ filter: /src\/sandbox\/engine\/dockerode\.ts$/ }, () => ({
      contents: `import Dockerode from 'dockerode'; export const DockerodeClient = Dockerode;`,
      loader: 'ts',
    }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outdir: 'dist/bundle',
  outExtension: { '.js': '.cjs' },
  // import() becomes require(): the bundle runs as a vm.Script, which has no ESM loader of its own.
  supported: { 'dynamic-import': false },
  sourcemap: 'linked',
  // The bundle runs as a CommonJS function (run-bundle.ts): import.meta.url is its own file.
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: 'const __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
  // Readable stack traces without a source map: names and code as written.
  minify: false,
  legalComments: 'none',
};

await build({
  ...common,
  entryPoints: Object.fromEntries(BINS.map((bin) => [bin, `src/cli/${bin}-main.ts`])),
  // A native addon stays a package, and so do the modules required lazily (above).
  external: ['node-pty', ...Object.values(LAZY).map(([, real]) => real)],
  plugins: [lazyFunctionModules],
});
// What `agent-kernel serve` loads first to bridge to a running kernel (src/cli/agent-kernel.ts):
// Node built-ins and a few hundred lines, nothing of the rest (the architecture test keeps it so).
await build({ ...common, entryPoints: { 'serve-bridge': 'src/cli/commands/agent-kernel/serve-bridge.ts' } });
// tsc does not keep the executable bit: make the two bins runnable.
for (const bin of BINS) chmodSync(`dist/cli/${bin}.js`, 0o755);
