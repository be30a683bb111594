import { silentLogger } from '../../../../src/log/logger.js';
import { openSandbox } from '../../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../../src/sandbox/sandbox.js';
import { tmuxArgv, tmuxSocketName } from '../../../../src/tty/host/tmux-server.js';
import { TtyManager } from '../../../../src/tty/tty-manager.js';
import type { TtyReport, WaitResult } from '../../../../src/tty/api/types.js';
import { type TestInstance, createTestInstance } from '../../../helpers/test-instance.js';

/** `pty`: the host backend without tmux (node-pty PTYs, not persistent), forced with hostTmux: false. */
export type Backend = 'host' | 'docker' | 'pty';

export interface Terminals {
  backend: Backend;
  test: TestInstance;
  sandbox: Sandbox;
  manager: TtyManager;
  /** Start another manager on the same instance (after the first was disposed or killed). */
  restart(): Promise<TtyManager>;
  cleanup(): Promise<void>;
}

/** A throw-away instance on the given backend with a TtyManager started on it. */
export async function startTerminals(backend: Backend, tty: Record<string, unknown> = {}): Promise<Terminals> {
  const onHost = backend !== 'docker';
  const config = { tty, ...(onHost ? { container: { backend: 'host' } } : {}) };
  const test = await createTestInstance({ config, ...(onHost ? { containerfile: false as const } : {}) });
  const logger = silentLogger();
  const hostTmux = backend !== 'pty';
  const sandbox = await openSandbox(test.instance, { logger });
  const terminals: Terminals = {
    backend,
    test,
    sandbox,
    manager: await TtyManager.start({ instance: test.instance, sandbox, logger, hostTmux }),
    async restart() {
      terminals.manager = await TtyManager.start({ instance: test.instance, sandbox, logger, hostTmux });
      return terminals.manager;
    },
    async cleanup() {
      await terminals.manager.dispose().catch(() => {});
      await killTmuxServer(sandbox, tmuxSocketName(sandbox, test.name));
      await test.cleanup();
    },
  };
  return terminals;
}

/** The report of one terminal in a wait result (fails the test when it is missing). */
export function reportOf(result: WaitResult, tty: number): TtyReport {
  const report = result.changed.find((r) => r.tty === tty);
  if (!report) throw new Error(`no report for TTY ${tty} in ${JSON.stringify(result, null, 2)}`);
  return report;
}

/** Call wait until `done` says the collected text is complete; returns all text reported for the TTY. */
export async function waitFor(manager: TtyManager, tty: number, done: (text: string) => boolean, timeoutMs = 30_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  let text = '';
  while (Date.now() < until) {
    const result = await manager.wait({ timeoutMs: 5000 });
    const report = result.changed.find((r) => r.tty === tty);
    if (report) text += `${report.text}\n`;
    if (done(text)) return text;
  }
  throw new Error(`TTY ${tty} never showed what was expected; it showed:\n${text}`);
}

/**
 * Stop a test's tmux server and remove its socket file (tmux 3.3 leaves it behind). tmux 3.3a's
 * kill-server can hang for good when a control client left with output unwritten (fixed upstream
 * after 3.3a), so a tmux server still there after it is killed by its pid.
 */
export async function killTmuxServer(sandbox: Sandbox, socket: string): Promise<void> {
  const env = { TMUX: '' };
  const where = await sandbox.run(tmuxArgv(socket, 'display', '-p', '#{pid} #{socket_path}'), { env }).catch(() => undefined);
  const reply = where?.exitCode === 0 ? where.stdout.trim() : '';
  const pid = reply.slice(0, Math.max(0, reply.indexOf(' ')));
  const file = reply.slice(pid.length + 1);
  await sandbox.run(tmuxArgv(socket, 'kill-server'), { env, timeoutMs: 5000 }).catch(() => {});
  const killIfTmux = 'grep -qx "tmux.*" /proc/"$1"/comm 2>/dev/null && kill -KILL "$1"; true';
  if (/^[1-9][0-9]*$/.test(pid)) await sandbox.run(['sh', '-c', killIfTmux, 'sh', pid]).catch(() => {});
  if (file) await sandbox.run(['rm', '-f', file]).catch(() => {});
}
