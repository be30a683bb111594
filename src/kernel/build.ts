import { statSync } from 'node:fs';
import path from 'node:path';

/**
 * Which build of agent-kernel a bin runs: the size and time of the bundle beside it
 * (`dist/bundle/agent-kernel.cjs` for `dist/cli/agent-kernel.js`). A kernel reports the one it
 * started from; watch compares it with the one on disk now and replaces an outdated kernel
 * between ticks.
 */
export function bundleIdentity(binPath: string): string {
  try {
    const stat = statSync(path.resolve(path.dirname(binPath), '..', 'bundle', `${path.basename(binPath, '.js')}.cjs`));
    return `${stat.size}-${Math.trunc(stat.mtimeMs)}`;
  } catch {
    return 'unbundled';
  }
}
