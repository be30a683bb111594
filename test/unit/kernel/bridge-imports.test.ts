import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

/** The modules `file` loads when it runs: its imports that are not type-only, followed through src/. */
function runtimeImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(/(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
    if (match[2]) continue;
    const what = match[3]!;
    if (what.startsWith('.')) runtimeImports(path.resolve(path.dirname(file), what).replace(/\.js$/, '.ts'), seen);
    else seen.add(what);
  }
  return seen;
}

describe("serve's bridge to a running kernel", () => {
  it('loads Node built-ins and a handful of small modules, nothing else: a tick pays for little more than Node to log in', () => {
    const loaded = [...runtimeImports(path.join(SRC, 'cli', 'commands', 'agent-kernel', 'serve-bridge.ts'))];
    expect(loaded.filter((m) => !m.startsWith(SRC) && !m.startsWith('node:'))).toEqual([]);
    // Each of these costs a few ms of CPU to load, at every login: the bridge opens its session on a plain socket.
    expect(loaded.filter((m) => m === 'node:http' || m === 'node:crypto')).toEqual([]);
    const ours = loaded.filter((m) => m.startsWith(SRC)).map((m) => path.relative(SRC, m));
    expect(ours.length).toBeLessThanOrEqual(12);
    const lines = ours.reduce((sum, m) => sum + readFileSync(path.join(SRC, m), 'utf8').split('\n').length, 0);
    expect(lines).toBeLessThan(1200);
  });
});
