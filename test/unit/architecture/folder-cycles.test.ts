import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Folder → folders its files import (relative imports, type-only ones included: they couple too). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = path.relative(SRC, path.dirname(file)) || '.';
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const to = path.relative(SRC, path.dirname(path.resolve(path.dirname(file), match[1]!))) || '.';
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

/** Every cycle's folders, found by depth-first search (each reported once, from its smallest member). */
function folderCycles(graph: Map<string, Set<string>>): string[][] {
  const cycles = new Map<string, string[]>();
  const visit = (start: string, node: string, trail: string[]): void => {
    for (const next of graph.get(node) ?? []) {
      if (next === start) {
        const cycle = [...trail];
        const key = [...cycle].sort().join(' ');
        if (!cycles.has(key)) cycles.set(key, cycle);
      } else if (!trail.includes(next) && next > start) {
        visit(start, next, [...trail, next]);
      }
    }
  };
  for (const start of graph.keys()) visit(start, start, [start]);
  return [...cycles.values()];
}

describe('architecture', () => {
  it('has no import cycle between folders of src/', () => {
    expect(folderCycles(folderGraph()).map((c) => [...c, c[0]].join(' -> '))).toEqual([]);
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
    ]);
    expect(folderCycles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('keeps the MCP SDK out of the domain folders and the terminals a server drives', () => {
    const offenders = sourceFiles(SRC)
      .filter((f) => /^(sandbox|tty|observe|config|runner|util|log|kernel|server\/terminals)\//.test(path.relative(SRC, f)))
      .filter((f) => readFileSync(f, 'utf8').includes('@modelcontextprotocol/sdk'))
      .map((f) => path.relative(SRC, f));
    expect(offenders).toEqual([]);
  });
});
