// Runs bench/tty-bench.mjs (plain JS on the built dist/: run `npm run build` first), one
// process per backend. Usage: node bench/tty.mjs [docker] [host]   (default: both)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'bench', 'tty-bench.mjs');
process.chdir(root);
const backends = process.argv.slice(2).filter((a) => a === 'docker' || a === 'host');
for (const backend of backends.length > 0 ? backends : ['docker', 'host']) {
  // A fresh process per backend, so that the memory figures start from a clean server.
  const child = spawn(process.execPath, ['--expose-gc', out, backend], { stdio: 'inherit' });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) process.exit(code ?? 1);
}
