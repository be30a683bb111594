// Runs bench/tty-bench.ts (Node 20 cannot run TypeScript): bundle it, then import it.
// The bundle sits two levels below the root, like src/x/, so paths from import.meta.url hold.
// Usage: node bench/tty.mjs [docker] [host]   (default: both)
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
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
const backends = process.argv.slice(2).filter((a) => a === 'docker' || a === 'host');
for (const backend of backends.length > 0 ? backends : ['docker', 'host']) {
  // A fresh process per backend, so that the memory figures start from a clean server.
  const child = spawn(process.execPath, ['--expose-gc', out, backend], { stdio: 'inherit' });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) process.exit(code ?? 1);
}
