import { spawnSync } from 'node:child_process';
import { resolveInstance } from '../../../config/instance.js';
import { CodedError } from '../../../errors.js';
import { engineSetting } from '../../../sandbox/engine/engine.js';
import { attachArgv, dockerHostFor, listWindowsArgv } from '../../../tty/host/attach-command.js';
import { TerminalOutputFilter } from '../../../util/terminal-filter.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, err } from '../command.js';

const USAGE = 'attach <name-or-dir> <tty> [--write]';

export const attachCommand: Command = {
  name: 'attach',
  summary: "Show one of an instance's TTYs live in your terminal: read-only (Ctrl-b d or Ctrl-c ends it), or with --write what you type reaches it (Ctrl-b d detaches).",
  usage: USAGE,
  options: [
    ["--write", "what you type reaches the terminal (Ctrl-b d detaches)"],
  ],
  examples: [
    "agent-kernel attach demo 0           # read-only; Ctrl-c ends it",
    "agent-kernel attach demo 0 --write",
  ],
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, {
      usage: `agent-kernel ${USAGE}`,
      options: { write: { type: 'boolean', default: false } },
      positionals: { min: 2, max: 2 },
      missing: 'Name an instance and a TTY.',
    });
    const write = values.write;
    const [target, ttyText] = positionals as [string, string];
    const tty = Number(ttyText);
    if (!/^\d+$/.test(ttyText) || tty > 19) throw new CodedError('USAGE', `TTY must be a number from 0 to 19, got ${JSON.stringify(ttyText)}.`);
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      throw new CodedError('USAGE', 'attach needs a terminal: run it in an interactive shell (use agent-kernel ls, or read <data>/tmp/sessions/tty_N/screen, from scripts).');
    }
    const instance = await resolveInstance(target);
    const config = instance.config.container;
    const where = { backend: config.backend, instanceName: instance.name, ...(config.user ? { user: config.user } : {}) };
    const argv = attachArgv(where, tty, write);
    const env = { ...process.env };
    const dockerHost = dockerHostFor(engineSetting(config));
    if (dockerHost) env.DOCKER_HOST = dockerHost;

    // Check first, so a missing TTY or container gets a clear message rather than tmux's.
    const list = listWindowsArgv(where);
    const check = spawnSync(list[0] as string, list.slice(1), { env, encoding: 'utf8' });
    if (check.error) throw new CodedError('USAGE', `Cannot run ${argv[0]}: ${check.error.message}. Install the docker CLI (or run: ${argv.join(' ')}).`);
    if (check.status !== 0) {
      throw new CodedError('TTY_NOT_FOUND', `No terminals are running for ${instance.name} (${check.stderr.trim() || `exit ${check.status}`}). Start them with agent-kernel serve and login.`);
    }
    if (!check.stdout.split('\n').includes(String(tty))) {
      throw new CodedError('TTY_NOT_FOUND', `TTY ${tty} of ${instance.name} is not open. Run agent-kernel ls ${target} to see the open ones.`);
    }
    if (!write) err(`Watching TTY ${tty} of ${instance.name} read-only (detach: Ctrl-b d or Ctrl-c; --write to type).\n`);
    return attachThroughFilter(argv, env, write);
  },
};

/** tmux's own detach, its prefix then d: the client exits, in the container too. */
const DETACH_KEYS = '\x02d';
/** A client that has not detached by then is killed here (its process in the container may then live on). */
const DETACH_GRACE_MS = 3000;
const ENDING_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM'] as const;

/**
 * Run the attach in a PTY of this process and pass its output to the person's terminal through
 * TerminalOutputFilter. The `tmux` that draws it runs in the container, where the agent is root
 * and can replace it: raw, its output could write the person's clipboard (OSC 52) or title, or
 * ask the terminal to answer into the person's input. Resizes go the other way; keys too with
 * `write`. Read-only is kept here, not by that tmux: keys stay on the host, and Ctrl-b d or
 * Ctrl-c ends the attach. It ends by tmux's own detach (a read-only client still obeys it), as
 * does a hang-up or a kill of this process: killing the docker CLI would leave its `tmux attach`
 * running in the container.
 */
async function attachThroughFilter(argv: string[], env: NodeJS.ProcessEnv, write: boolean): Promise<number> {
  const { default: nodePty } = await import('node-pty');
  const size = (): { cols: number; rows: number } => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 });
  const term = nodePty.spawn(argv[0] as string, argv.slice(1), { name: 'xterm-256color', ...size(), env, encoding: null });
  const filter = new TerminalOutputFilter();
  let prefix = false;
  let ending: NodeJS.Timeout | undefined;
  const end = (): void => {
    if (ending) return;
    term.write(DETACH_KEYS);
    ending = setTimeout(() => term.kill(), DETACH_GRACE_MS);
  };
  const onInput = (data: Buffer): void => {
    if (write) return term.write(data);
    for (const byte of data) {
      if (byte === 0x03 || (prefix && byte === 0x64)) return end();
      prefix = byte === 0x02;
    }
  };
  const onResize = (): void => {
    const { cols, rows } = size();
    term.resize(cols, rows);
  };
  process.stdin.setRawMode(true);
  process.stdin.on('data', onInput);
  process.stdout.on('resize', onResize);
  for (const signal of ENDING_SIGNALS) process.on(signal, end);
  // A terminal that hung up fails reads and writes: end the same way (unhandled, the error would kill this process).
  process.stdin.on('error', end);
  process.stdout.on('error', end);
  // Once ending, the person's terminal may be gone (a hang-up): nothing more is written to it.
  term.onData((data) => {
    if (!ending) process.stdout.write(filter.push(data as unknown as Buffer));
  });
  return new Promise<number>((resolve) => {
    term.onExit(({ exitCode }) => {
      clearTimeout(ending);
      for (const signal of ENDING_SIGNALS) process.off(signal, end);
      process.stdin.off('error', end);
      process.stdout.off('error', end);
      process.stdin.off('data', onInput);
      process.stdout.off('resize', onResize);
      try {
        process.stdin.setRawMode(false);
      } catch {
        // The person's terminal hung up.
      }
      process.stdin.pause();
      resolve(ending ? EXIT.OK : (exitCode ?? EXIT.FAILED));
    });
  });
}
