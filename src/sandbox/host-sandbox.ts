import { spawn } from 'node:child_process';
import { CodedError } from '../errors.js';
import { collect } from './run-collect.js';
import type { RunOptions, RunResult, Sandbox, SandboxProcess, SpawnOptions } from './sandbox.js';

export interface HostSandboxOptions {
  /** Default working directory: the data directory. */
  cwd: string;
  env?: Readonly<Record<string, string>>;
}

/**
 * Processes on this machine (the `host` backend), for a server that already runs inside a
 * sandbox of its own. Same contract as the container: plain pipes, exit codes, timeouts.
 */
export class HostSandbox implements Sandbox {
  readonly kind = 'host' as const;
  readonly description: string;
  private readonly defaults: HostSandboxOptions;

  constructor(options: HostSandboxOptions) {
    this.defaults = options;
    this.description = `this machine (host backend, ${options.cwd})`;
  }

  spawn(argv: readonly string[], options: SpawnOptions = {}): Promise<SandboxProcess> {
    const [command, ...args] = argv;
    if (command === undefined) return Promise.reject(new CodedError('EXEC_FAILED', 'Nothing to run: the command is empty.'));
    if (options.user !== undefined) {
      return Promise.reject(
        new CodedError('EXEC_FAILED', `The host backend cannot run commands as another user (${options.user}); remove container.user or use the docker backend.`),
      );
    }
    const child = spawn(command, args, {
      cwd: options.cwd ?? this.defaults.cwd,
      env: { ...process.env, ...this.defaults.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new Promise((resolve, reject) => {
      const exited = new Promise<number>((resolveExit) => {
        child.once('close', (code, signal) => resolveExit(code ?? (signal ? 128 + signalNumber(signal) : -1)));
      });
      child.once('error', (error) =>
        reject(new CodedError('EXEC_FAILED', `Cannot run ${JSON.stringify(argv.join(' '))}: ${error.message}`, { cause: error })),
      );
      child.once('spawn', () =>
        resolve({
          stdin: child.stdin,
          stdout: child.stdout,
          stderr: child.stderr,
          exited,
          close: () => {
            child.stdin.destroy();
            child.stdout.destroy();
            child.stderr.destroy();
          },
          kill: () => {
            child.kill('SIGKILL');
          },
        } as SandboxProcess),
      );
    });
  }

  async run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    return collect(await this.spawn(argv, options), options);
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };

function signalNumber(signal: NodeJS.Signals): number {
  return SIGNALS[signal] ?? 0;
}
