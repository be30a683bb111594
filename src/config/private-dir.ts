import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * The operator's folders (the config home and what is in it: instance files, the registry,
 * tokens, secrets) are the operator's alone: 0700, with 0600 files. Made so when missing, and
 * tightened when an older version (or a umask) left them open. `dir` and its folders up to
 * `home` are made private; folders above `home` are left as they are.
 */
export async function ensurePrivateDir(dir: string, home: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const rel = path.relative(home, dir);
  const chain = rel.startsWith('..') || path.isAbsolute(rel) ? [dir] : [home, ...rel.split(path.sep).filter(Boolean).map((_, i, parts) => path.join(home, ...parts.slice(0, i + 1)))];
  for (const folder of chain) await chmod(folder, 0o700);
}
