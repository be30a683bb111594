import type { Instance } from '../../config/instance.js';
import { describeError, isCodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { sleep } from '../../util/sleep.js';
import { isProcessAlive, readLockHolder } from '../../util/process/pid-lock.js';
import type { InstanceLockHolder } from '../../tty/instance-lock.js';
import { reachKernel } from '../client/reach-kernel.js';
import { type KernelLink, connectKernel } from '../client/session-link.js';
import type { KernelClientKind } from '../protocol.js';
import { type RunningKernel, runKernel } from './run-kernel.js';

/**
 * `serve`'s one way to the terminals: a session on the instance's kernel. The kernel that runs
 * (watch's, another serve's), else one hosted in this process on the instance's socket, as
 * `agent-kernel kernel` runs it, for as long as this serve runs: other clients reach it there,
 * and this serve talks to it through that socket as they do. When a kernel hosted by a serve
 * stops (its serve ended, a snapshot's restore took the instance), a serve still in use hosts
 * it again once the instance is free, and its session goes on (it reconnects,
 * lasting-session.ts). A kernel of watch's is watch's to restart.
 */
export interface KernelForServe {
  readonly socketPath: string;
  readonly dataDir: string;
  /** The first session; the bridge and the HTTP relay open more on socketPath, and reconnect there. */
  readonly link: KernelLink;
  /** Whether this process hosted the kernel when it started. */
  readonly hosted: boolean;
  /** Stop the kernel this process hosts, if any (the terminals live on in tmux). */
  close(why: string): Promise<void>;
}

export interface KernelForServeOptions {
  client: KernelClientKind;
  /** false: on the host backend, PTYs even where tmux is installed. */
  hostTmux: boolean;
  /** How long a serve waits, once no kernel serves, before it hosts one (watch restarts its own first). Default 5 s. */
  rehostMs?: number;
}

/** Tries when another process takes the instance between our look and our start (two serves at once). */
const ATTEMPTS = 3;

const lockedByKernel = (error: unknown) => isCodedError(error, 'INSTANCE_LOCKED') && error.details.role === 'kernel';

export async function kernelForServe(instance: Instance, logger: Logger, options: KernelForServeOptions): Promise<KernelForServe> {
  const host = () => runKernel(instance, { logger, hostTmux: options.hostTmux, hostedBy: 'serve' });
  for (let attempt = 1; ; attempt++) {
    const reached = await reachKernel(instance, logger, options.client);
    if (reached) {
      const holder = (await readLockHolder(instance.paths.instanceLock)) as InstanceLockHolder | undefined;
      const standby = holder?.hostedBy === 'serve' ? keepHosted(instance, logger, options, host, undefined) : undefined;
      return { ...reached, dataDir: reached.link.hello.dataDir, hosted: false, close: (why) => standby?.close(why) ?? Promise.resolve() };
    }
    let kernel: RunningKernel;
    try {
      kernel = await host();
    } catch (error) {
      // Another kernel took the instance a moment ago: reach that one.
      if (attempt < ATTEMPTS && lockedByKernel(error)) continue;
      throw error;
    }
    let link: KernelLink;
    try {
      link = await connectKernel(kernel.socketPath, { client: options.client });
    } catch (error) {
      await kernel.stop('serve could not reach the kernel it hosts');
      throw error;
    }
    const kept = keepHosted(instance, logger, options, host, kernel);
    return { socketPath: kernel.socketPath, dataDir: link.hello.dataDir, link, hosted: true, close: (why) => kept.close(why) };
  }
}

/**
 * Host the kernel whenever none serves the instance while this serve runs: once the kernel
 * it hosts (`first`), or the other serve's kernel it uses, has stopped and nobody holds the
 * instance. Ends when a kernel that is not a serve's (watch's) holds it.
 */
function keepHosted(instance: Instance, logger: Logger, options: KernelForServeOptions, host: () => Promise<RunningKernel>, first: RunningKernel | undefined): { close(why: string): Promise<void> } {
  let current = first;
  let closed = false;
  const stopSleeping = new AbortController();
  const keep = async (): Promise<void> => {
    for (;;) {
      if (current) await current.stopped;
      current = undefined;
      if (closed) return;
      await sleep(options.rehostMs ?? 5000, stopSleeping.signal);
      if (closed) return;
      const holder = (await readLockHolder(instance.paths.instanceLock)) as InstanceLockHolder | undefined;
      if (holder && isProcessAlive(holder.pid)) {
        if (holder.role === 'kernel' && holder.hostedBy !== 'serve') return;
        continue; // a restore or a tick's start holds it, or another serve hosts it: look again
      }
      try {
        const next = await host();
        if (closed) return void (await next.stop('the client went away'));
        current = next;
        logger.info({ socket: next.socketPath }, 'no kernel served the instance: hosting it in this process');
      } catch (error) {
        if (!isCodedError(error, 'INSTANCE_LOCKED')) logger.warn({ err: error }, `hosting the kernel failed: ${describeError(error)}`);
      }
    }
  };
  keep().catch((error: unknown) => logger.error({ err: error }, `keeping a kernel for this serve failed: ${describeError(error)}`));
  return {
    close(why) {
      closed = true;
      stopSleeping.abort();
      return current?.stop(why) ?? Promise.resolve();
    },
  };
}
