import type { Instance } from '../../config/instance.js';
import { CodedError, type ErrorCode, describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { isNoKernel } from '../../kernel/client/link.js';
import { type BuildFailure, CONTAINER_READY_MS, type SandboxFailure, type SandboxReady, TERMINALS_READY_MS } from '../../kernel/protocol.js';
import { ensurePrivateSocketDir, kernelSocketPath } from '../../kernel/socket-path.js';
import { requestSocketJsonLines } from '../../util/net/socket-json.js';
import { attachSandbox, openSandbox } from '../../sandbox/container/open-sandbox.js';
import type { ProgressCallback } from '../../sandbox/engine/image.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { isProcessAlive } from '../../util/process/pid-lock.js';
import { tryInstanceLock } from '../../tty/instance-lock.js';
import { sleep } from '../../util/sleep.js';

/** How long a tick waits for a kernel that holds the instance but does not answer yet (it is starting). */
const KERNEL_STARTING_MS = 60_000;

export interface TickSandbox {
  sandbox: Sandbox;
  /** The agent's changed Containerfile did not build; the tick goes on in the container as it was. */
  buildFailed?: BuildFailure;
}

/**
 * The container a tick's hooks run in, up to date (a Containerfile the agent changed is built).
 * Only the process that owns the instance may change its container: the kernel, when one runs,
 * does it when the tick asks (and restarts its terminals if the container had to be made anew);
 * without one the runner does it itself, holding the instance lock meanwhile; while a standalone
 * server holds the lock, the container is that server's and the tick only runs commands in it.
 */
export async function openTickSandbox(instance: Instance, options: { logger: Logger; onProgress?: ProgressCallback }): Promise<TickSandbox> {
  const { logger } = options;
  const socketPath = kernelSocketPath(instance.paths.stateRoot);
  const through = async (): Promise<TickSandbox | undefined> => {
    const ready = await prepareThroughKernel(socketPath, instance, options);
    if (ready === false) return undefined;
    return { sandbox: await attachSandbox(instance), ...(ready.buildFailed ? { buildFailed: ready.buildFailed } : {}) };
  };
  const first = await through();
  if (first) return first;
  const taken = await tryInstanceLock(instance.paths.instanceLock, 'runner');
  if ('lock' in taken) {
    try {
      return { sandbox: await openSandbox(instance, options) };
    } finally {
      await taken.lock.release();
    }
  }
  const { holder } = taken;
  if (holder.role === 'kernel') {
    const deadline = Date.now() + KERNEL_STARTING_MS;
    while (Date.now() < deadline && isProcessAlive(holder.pid)) {
      const ready = await through();
      if (ready) return ready;
      await sleep(200);
    }
  }
  logger.info({ pid: holder.pid, role: holder.role }, `a server (PID ${holder.pid}) owns the instance; the tick runs its hooks in the container as that server keeps it`);
  return { sandbox: await attachSandbox(instance) };
}

/** Past this silence (the kernel sends a line every SANDBOX_HEARTBEAT_MS while it works) the kernel counts as gone. */
const KERNEL_SILENT_MS = 60_000;

/**
 * Ask the kernel to bring the container up to date (protocol.ts: progress lines, then the
 * result); false when no kernel answers. A build that is slow goes on for as long as
 * container.build_timeout allows; one that fails throws with its step and output.
 */
async function prepareThroughKernel(socketPath: string, instance: Instance, options: { logger: Logger; onProgress?: ProgressCallback }): Promise<false | SandboxReady> {
  const deadlineMs = instance.config.container.build_timeout + CONTAINER_READY_MS + TERMINALS_READY_MS + KERNEL_SILENT_MS;
  let answer: { status: number; last: unknown };
  try {
    ensurePrivateSocketDir(socketPath, false);
    answer = await requestSocketJsonLines(socketPath, '/v1/sandbox', { method: 'POST', idleMs: KERNEL_SILENT_MS, deadlineMs, who: `The kernel at ${socketPath}` }, (value) => {
      const line = value as Partial<{ progress: string }>;
      if (typeof line.progress !== 'string') return;
      options.logger.info({ phase: 'container' }, line.progress);
      options.onProgress?.(line.progress);
    });
  } catch (error) {
    if (isNoKernel(error)) return false;
    throw new CodedError('KERNEL_UNREACHABLE', `The instance's kernel did not bring the container up: ${describeError(error)}`, { cause: error });
  }
  const last = (answer.last ?? {}) as Partial<SandboxReady & SandboxFailure>;
  if (typeof last.sandbox === 'string' && answer.status === 200) return last as SandboxReady;
  throw new CodedError((last.code as ErrorCode | undefined) ?? 'CONTAINER_FAILED', last.error ?? `the kernel answered ${answer.status}`, last.buildFailed ? { details: { buildFailed: last.buildFailed } } : {});
}
