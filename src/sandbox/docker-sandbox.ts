import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { PassThrough, Writable } from 'node:stream';
import type Dockerode from 'dockerode';
import { CodedError, describeError } from '../errors.js';
import { type Engine, statusCode } from './engine/engine.js';
import { collect } from './run-collect.js';
import { sleep } from '../util/sleep.js';
import type { RunOptions, RunResult, Sandbox, SandboxProcess, SpawnOptions } from './sandbox.js';

export interface DockerSandboxOptions {
  engine: Engine;
  containerName: string;
  /** Defaults for every process: the data directory, the configured user and env. */
  cwd: string;
  user?: string | undefined;
  env?: Readonly<Record<string, string>>;
  /** A remote engine's copy of a host folder into the container (files/show-folder.ts); absent on a local engine. */
  showHostFolder?: (source: string, target: string) => Promise<void>;
}

/** How long to wait for the engine to notice an exec has ended after its stream closed. */
const EXIT_SETTLE_MS = 2000;

/** Processes in the instance's container, as engine execs with plain (demultiplexed) pipes. */
export class DockerSandbox implements Sandbox {
  readonly kind = 'docker' as const;
  readonly description: string;
  readonly containerName: string;
  private readonly engine: Engine;
  private readonly defaults: DockerSandboxOptions;

  constructor(options: DockerSandboxOptions) {
    this.engine = options.engine;
    this.containerName = options.containerName;
    this.defaults = options;
    this.description = `container ${options.containerName} (${options.engine.name} ${options.engine.version})`;
    if (options.showHostFolder) this.showHostFolder = options.showHostFolder;
  }

  readonly showHostFolder?: (source: string, target: string) => Promise<void>;

  async spawn(argv: readonly string[], options: SpawnOptions = {}): Promise<SandboxProcess> {
    if (argv.length === 0) throw new CodedError('EXEC_FAILED', 'Nothing to run: the command is empty.');
    const env = { ...this.defaults.env, ...options.env };
    const container = this.engine.docker.getContainer(this.containerName);
    let exec: Dockerode.Exec;
    let stream: Duplex;
    try {
      exec = await container.exec({
        Cmd: [...argv],
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
        WorkingDir: options.cwd ?? this.defaults.cwd,
        ...(options.user ?? this.defaults.user ? { User: options.user ?? this.defaults.user } : {}),
      });
      stream = await exec.start({ hijack: true, stdin: true });
    } catch (error) {
      const code = statusCode(error);
      const hint =
        code === 404 || code === 409
          ? ` The container is not running: agent-kernel container up <instance> starts it.`
          : '';
      throw new CodedError('EXEC_FAILED', `Cannot run ${JSON.stringify(argv.join(' '))} in ${this.containerName}: ${describeError(error)}.${hint}`, {
        cause: error,
      });
    }

    const stdout = new PassThrough();
    const stderr = new PassThrough();
    // The engine's demuxer writes whatever arrives, whatever the reader says: pause the connection
    // while a reader is behind (throttle() pauses stdout), or its output piles up here without bound.
    // Once ended (close()), what the connection still held is dropped: a resume already under way
    // hands it over after the end.
    let ended = false;
    const gated = (target: PassThrough) => ({
      write(chunk: Buffer): boolean {
        if (!ended && !target.write(chunk)) stream.pause();
        return true;
      },
    });
    const resume = (): void => {
      if (!stdout.writableNeedDrain && !stderr.writableNeedDrain) stream.resume();
    };
    stdout.on('drain', resume);
    stderr.on('drain', resume);
    this.engine.docker.modem.demuxStream(stream, gated(stdout) as unknown as NodeJS.WritableStream, gated(stderr) as unknown as NodeJS.WritableStream);
    let onEnded = (): void => undefined;
    const finish = (): void => {
      if (ended) return;
      ended = true;
      stdout.end();
      stderr.end();
      onEnded();
    };
    stream.once('end', finish);
    stream.once('close', finish);
    stream.once('error', finish);

    const stdin = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (stream.destroyed || !stream.writable) {
          callback();
          return;
        }
        stream.write(chunk, callback);
      },
      final(callback) {
        // Half-close: the engine then closes the process's stdin; its output keeps coming.
        if (!stream.destroyed && stream.writable) stream.end();
        callback();
      },
    });
    stdin.on('error', () => undefined);

    const exited = new Promise<number>((resolve) => {
      const onClosed = async (): Promise<void> => {
        const deadline = Date.now() + EXIT_SETTLE_MS;
        for (;;) {
          try {
            const info = await exec.inspect();
            if (!info.Running) return resolve(info.ExitCode ?? -1);
          } catch {
            return resolve(-1);
          }
          if (Date.now() > deadline) return resolve(-1);
          await sleep(25);
        }
      };
      onEnded = () => void onClosed();
    });

    return {
      stdin,
      stdout,
      stderr,
      exited,
      close: () => {
        stream.destroy();
        finish();
      },
      // Not in the interface: used by run() to kill a command that timed out.
      kill: () => killExec(exec),
    } as SandboxProcess & { kill(): Promise<void> };
  }

  async run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const child = (await this.spawn(argv, options)) as SandboxProcess & { kill?: () => Promise<void> };
    return collect(child, options);
  }
}

/**
 * Kill an exec that outlived its timeout. The engine API cannot signal an exec, so this works
 * when the engine runs on this machine and we may signal its processes (root with a local
 * socket); elsewhere the process is abandoned (its stdin is closed, its output discarded).
 */
async function killExec(exec: Dockerode.Exec): Promise<void> {
  try {
    const info = await exec.inspect();
    if (!info.Running || !info.Pid || !/^[0-9a-f]{64}$/.test(info.ContainerID)) return;
    // The PID must be a process of this container on this machine: not a number reused since, nor a PID of a
    // remote engine's machine that names another process here. Its cgroup path (the kernel's) names the container.
    const cgroup = readFileSync(`/proc/${info.Pid}/cgroup`, 'utf8');
    if (!cgroup.includes(info.ContainerID)) return;
    process.kill(info.Pid, 'SIGKILL');
  } catch {
    // abandoned
  }
}
