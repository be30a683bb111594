import { spawn, spawnSync } from 'node:child_process';
import { resolveInstance } from '../../config/instance.js';
import { KernelError } from '../../errors.js';
import { attachArgv, dockerHostFor, listWindowsArgv } from '../../tty/attach-command.js';
import { parseCommandArgs } from '../args.js';
import { type Command, EXIT, err } from '../command.js';

const USAGE = 'attach <name-or-dir> <tty> [--write]';

export const attachCommand: Command = {
  name: 'attach',
  summary: "Attach your terminal to one of an instance's TTYs to watch it (read-only unless --write).",
  usage: USAGE,
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
    if (!/^\d+$/.test(ttyText) || tty > 19) throw new KernelError('USAGE', `TTY must be a number from 0 to 19, got ${JSON.stringify(ttyText)}.`);
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      throw new KernelError('USAGE', 'attach needs a terminal: run it in an interactive shell (use agent-kernel ls, or read <data>/tmp/sessions/tty_N/screen, from scripts).');
    }
    const instance = await resolveInstance(target);
    const config = instance.config.container;
    const where = { backend: config.backend, instanceName: instance.name, ...(config.user ? { user: config.user } : {}) };
    const argv = attachArgv(where, tty, write);
    const env = { ...process.env };
    const dockerHost = dockerHostFor(config.engine_socket);
    if (dockerHost) env.DOCKER_HOST = dockerHost;

    // Check first, so a missing TTY or container gets a clear message rather than tmux's.
    const list = listWindowsArgv(where);
    const check = spawnSync(list[0] as string, list.slice(1), { env, encoding: 'utf8' });
    if (check.error) throw new KernelError('USAGE', `Cannot run ${argv[0]}: ${check.error.message}. Install the docker CLI (or run: ${argv.join(' ')}).`);
    if (check.status !== 0) {
      throw new KernelError('TTY_NOT_FOUND', `No terminals are running for ${instance.name} (${check.stderr.trim() || `exit ${check.status}`}). Start them with agent-kernel serve and login.`);
    }
    if (!check.stdout.split('\n').includes(String(tty))) {
      throw new KernelError('TTY_NOT_FOUND', `TTY ${tty} of ${instance.name} is not open. Run agent-kernel ls ${target} to see the open ones.`);
    }
    if (!write) err(`Watching TTY ${tty} of ${instance.name} read-only (detach: Ctrl-b d; --write to type).\n`);
    const child = spawn(argv[0] as string, argv.slice(1), { stdio: 'inherit', env });
    return new Promise<number>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => resolve(code ?? EXIT.FAILED));
    });
  },
};
