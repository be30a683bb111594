// Runs bench/tty-bench.ts (Node 20 cannot run TypeScript): bundle it, then import it.
// The bundle sits two levels below the root, like src/x/, so paths from import.meta.url hold.
// Usage: node --expose-gc bench/tty.mjs [docker] [host]
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'node_modules', '.agent-kernel-bench', 'tty-bench.mjs');
await mkdir(path.dirname(out), { recursive: true });
await build({
  input: path.join(root, 'bench', 'tty-bench.ts'),
  platform: 'node',
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  output: { file: out, format: 'esm' },
  logLevel: 'silent',
});
process.chdir(root);
await import(pathToFileURL(out).href);
