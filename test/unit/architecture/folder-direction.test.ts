import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Source, importsOf, readTree, resolveRelative } from './source-graph.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src');

/**
 * The folders each top folder of src/ may import, like xterm.js's tsconfig per layer: the
 * direction of every dependency, not only the absence of cycles. src/errors.ts is everyone's.
 * Read downward: the bins use everything; the web view and kernel-runner sit on the server's
 * domain folders; the kernel hosts the MCP server; the MCP server drives the terminals; the
 * terminals run in the sandbox.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  cli: ['web', 'runner', 'snapshot', 'mail', 'kernel', 'server', 'tty', 'observe', 'sandbox', 'state', 'config', 'log', 'util'],
  // The web view reads what the files say and reaches the terminals only through the kernel's
  // client (screens, a person's keys): no emulator, no tmux, no container of its own. Nothing of
  // kernel-runner's: the CLI hands it the runner's status.
  web: ['mail', 'kernel', 'server', 'observe', 'state', 'config', 'log', 'util'],
  // kernel-runner talks to the MCP server only as its harness does, through MCP: never server/.
  // Its one way in is kernel/: the supervisor it runs under watch, and the kernel's own requests (client/link.ts).
  runner: ['snapshot', 'mail', 'kernel', 'tty', 'observe', 'sandbox', 'state', 'config', 'log', 'util'],
  // Snapshots of a whole instance: the runner takes one before each tick, the CLI the rest; it
  // reaches the kernel only to stop it (client/link.ts) and holds the instance by its lock.
  snapshot: ['kernel', 'tty', 'sandbox', 'state', 'config', 'log', 'util'],
  // The post office: kept by watch, shown by the web view and the CLI, importing none of them.
  mail: ['observe', 'state', 'config', 'log', 'util'],
  kernel: ['server', 'tty', 'observe', 'sandbox', 'config', 'log', 'util'],
  server: ['tty', 'observe', 'sandbox', 'state', 'config', 'log', 'util'],
  tty: ['observe', 'sandbox', 'state', 'config', 'log', 'util'],
  observe: ['state', 'util'],
  sandbox: ['config', 'log', 'util'],
  state: ['config', 'util'],
  config: ['util'],
  log: ['util'],
  util: [],
};


const top = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : rel);

/** Every import of `sources` from one top folder into another it may not import, as `from -> to`. */
function againstDirection(sources: readonly Source[], allowed: Readonly<Record<string, readonly string[]>>): string[] {
  const found: string[] = [];
  for (const source of sources) {
    const from = top(source.rel);
    if (!source.rel.includes('/')) continue;
    for (const { specifier } of importsOf(source)) {
      const target = resolveRelative(source.rel, specifier);
      if (target === undefined || !target.includes('/')) continue;
      const to = top(target);
      if (to === from) continue;
      if (!(allowed[from] ?? []).includes(to)) found.push(`${source.rel} -> ${target}`);
    }
  }
  return found;
}

describe('the direction of each top folder of src/', () => {
  it('every top folder is named, with what it may import', () => {
    const folders = [...new Set(readTree(SRC).filter((s) => s.rel.includes('/')).map((s) => top(s.rel)))].sort();
    expect(folders).toEqual(Object.keys(ALLOWED).sort());
  });

  it('no import goes against the direction', () => {
    expect(againstDirection(readTree(SRC), ALLOWED)).toEqual([]);
  });

  it('fails on a planted web → runner import, a web → tty one (an emulator of its own), a server → kernel one and a runner → server one, static, dynamic or type-only', () => {
    const planted: Source[] = [
      { rel: 'web/view.ts', text: "import { gatherStatus } from '../runner/watch/service/status-view.js';" },
      { rel: 'web/live/screen.ts', text: "import { TtyEmulator } from '../../tty/screen/tty-emulator.js';\nimport { followScreen } from '../../kernel/client/terminal-client.js';" },
      { rel: 'server/http.ts', text: "const k = await import('../kernel/host/run-kernel.js');" },
      { rel: 'runner/tick/tick.ts', text: "import type { ToolDeps } from '../../server/tools/context.js';" },
      { rel: 'runner/watch/run-watch.ts', text: "import { KernelSupervisor } from '../../kernel/supervisor/kernel-supervisor.js';\nimport { CliError } from '../../errors.js';" },
    ];
    expect(againstDirection(planted, ALLOWED)).toEqual([
      'web/view.ts -> runner/watch/service/status-view.ts',
      'web/live/screen.ts -> tty/screen/tty-emulator.ts',
      'server/http.ts -> kernel/host/run-kernel.ts',
      'runner/tick/tick.ts -> server/tools/context.ts',
    ]);
  });

  it('the web view runs no terminal emulator of its own: no file of src/web/ imports @xterm/headless', () => {
    const emulating = readTree(SRC).filter((s) => s.rel.startsWith('web/') && importsOf(s).some((i) => i.specifier.startsWith('@xterm/')));
    expect(emulating.map((s) => s.rel)).toEqual([]);
  });
});
