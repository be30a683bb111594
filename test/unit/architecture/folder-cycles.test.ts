import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type SharedFile, type Source, computedImports, crowdedFolders, folderCycles, readTree, sharedFileLeaks } from './source-graph.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');
const sources = readTree(SRC);

/** The files two processes (or a process and the agent) share, and the one module that owns each. */
const SHARED_FILES: SharedFile[] = [
  { name: 'state.json', owner: 'state/runner-state.ts', pathKey: 'state' },
  { name: 'registry.json', owner: 'state/terminal-registry.ts', pathKey: 'terminalRegistry' },
  { name: 'status', owner: 'state/tty-status-file.ts', generic: true },
  { name: '.cast', owner: 'observe/recording.ts', suffix: true },
  { name: 'schedule.json', owner: 'runner/watch/schedule/schedule.ts', pathKey: 'schedule' },
  { name: 'paused', owner: 'runner/tick/paused.ts', generic: true, pathKey: 'paused' },
  { name: 'tick-ledger.json', owner: 'runner/watch/limits/tick-ledger.ts', pathKey: 'tickLedger' },
  { name: 'mcp-config.json', owner: 'runner/harnesses/mcp-server-spec.ts' },
  { name: 'events.jsonl', owner: 'observe/events/event-log.ts', pathKey: 'events' },
];

/** A planted tree: `rel → text`. */
function tree(files: Record<string, string>): Source[] {
  return Object.entries(files).map(([rel, text]) => ({ rel, text }));
}

describe('architecture of src/', () => {
  it('has no import cycle between folders, at any depth, dynamic imports included', () => {
    expect(folderCycles(sources)).toEqual([]);
  });

  it('has no import() whose module is computed (the cycle check could not follow it)', () => {
    expect(computedImports(sources)).toEqual([]);
  });

  it('reads and writes each shared file only in its module', () => {
    for (const shared of SHARED_FILES) expect(sources.map((s) => s.rel), `${shared.name}'s owner`).toContain(shared.owner);
    expect(sharedFileLeaks(sources, SHARED_FILES)).toEqual([]);
  });

  it('has no folder holding more than 15 files directly (a crowded folder hides its design: split it by concern)', () => {
    expect(crowdedFolders(sources, 15)).toEqual([]);
  });

  it('keeps the MCP SDK out of the domain folders, the terminals a server drives and the kernel but its host and HTTP relay', () => {
    const offenders = sources
      .filter((s) => /^(?:(?:sandbox|tty|observe|config|state|runner|util|log|server\/terminals)\/|kernel\/(?!host\/|client\/kernel-relay\.ts$))/.test(s.rel))
      .filter((s) => readFileSync(path.join(SRC, s.rel), 'utf8').includes('@modelcontextprotocol/sdk'))
      .map((s) => s.rel);
    expect(offenders).toEqual([]);
  });
});

describe('each check fails on a planted case', () => {
  it('a cycle of static imports', () => {
    const planted = tree({ 'a/x.ts': "import { y } from '../b/y.js';", 'b/y.ts': "import { z } from '../c/z.js';", 'c/z.ts': "export * from '../a/x.js';" });
    expect(folderCycles(planted)).toEqual(['a -> b -> c -> a']);
  });

  it('a cycle through import() alone, and through a type-only import', () => {
    expect(folderCycles(tree({ 'a/x.ts': "const y = await import('../b/y.js');", 'b/y.ts': "import type { X } from '../a/x.js';" }))).toEqual(['a -> b -> a']);
    expect(folderCycles(tree({ 'a/x.ts': "let y: import('../b/y.js').Y;", 'b/y.ts': "import '../a/x.js';" }))).toEqual(['a -> b -> a']);
  });

  it('a cycle between a folder and its subfolder', () => {
    const planted = tree({ 'cli/main.ts': "const c = () => import('./commands/ls.js');", 'cli/commands/ls.ts': "import { out } from '../command.js';", 'cli/command.ts': '' });
    expect(folderCycles(planted)).toEqual(['cli -> cli/commands -> cli']);
  });

  it('a cycle seen only once subfolders merge into their top folder', () => {
    const planted = tree({ 'runner/a/x.ts': "import { y } from '../../web/y.js';", 'web/y.ts': "import { z } from '../runner/b/z.js';", 'runner/b/z.ts': '' });
    expect(folderCycles(planted)).toEqual(['runner -> web -> runner']);
  });

  it('no cycle where there is none: imports in comments and strings do not count', () => {
    const planted = tree({ 'a/x.ts': "import { y } from '../b/y.js';\n// import '../a/x.js' from b\nconst s = \"import('../a/x.js')\";", 'b/y.ts': "// import { x } from '../a/x.js';\nexport const y = 'import ../a/x.js';" });
    expect(folderCycles(planted)).toEqual([]);
  });

  it('a crowded folder', () => {
    const planted = tree(Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`tty/f${i}.ts`, ''])));
    expect(crowdedFolders([...planted, ...tree({ 'tty/host/a.ts': '' })], 15)).toEqual(['tty: 16 files']);
  });

  it('an import() of a computed module', () => {
    expect(computedImports(tree({ 'a/x.ts': 'const m = await import(`./${name}.js`);' }))).toEqual(['a/x.ts']);
  });

  it('a shared file named, read raw, or parsed with its schema outside its module', () => {
    const owner = 'export const stateSchema = 1; const f = path.join(dir, "state.json"); await readFile(f);';
    const planted = tree({
      'state/runner-state.ts': owner,
      'config/paths.ts': "const state = path.join(kernel, 'state.json');",
      'web/named.ts': "const f = path.join(instance.paths.privateState, 'state.json');",
      'web/raw.ts': "import { readFile } from 'node:fs/promises';\nconst text = await readFile(instance.paths.state, 'utf8');",
      'web/untrusted.ts': "import { readUntrustedRange } from '../util/untrusted-fs.js';\nawait readUntrustedRange(path.dirname(instance.paths.state), 'x', { maxBytes: 1 });",
      'web/wrapper.ts': "import { readUntrustedRange } from '../util/untrusted-fs.js';\nasync function readJsonSafely(file) { return readUntrustedRange(path.dirname(file), path.basename(file), { maxBytes: 1 }); }\nawait readJsonSafely(instance.paths.state);",
      'web/schema.ts': "import { stateSchema } from '../state/runner-state.js';",
      'web/status.ts': "await readJson(path.join(sessions, dir), 'status');",
      'web/cast.ts': 'const name = `tty_${n}.cast`;',
      'web/fine.ts': "import { loadState } from '../state/runner-state.js';\nawait loadState(instance.paths.state); log.warn('cannot read state.json'); const s = { state: 'status' };",
    });
    const shared: SharedFile[] = [
      { name: 'state.json', owner: 'state/runner-state.ts', pathKey: 'state' },
      { name: 'status', owner: 'state/tty-status-file.ts', generic: true },
      { name: '.cast', owner: 'observe/recording.ts', suffix: true },
    ];
    expect(sharedFileLeaks(planted, shared).map((leak) => leak.split(':')[0])).toEqual(['web/named.ts', 'web/raw.ts', 'web/untrusted.ts', 'web/wrapper.ts', 'web/schema.ts', 'web/status.ts', 'web/cast.ts']);
  });
});
