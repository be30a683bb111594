import type { Instance } from '../../config/instance.js';
import { CodedError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { type LockHolder, type PidLock, acquirePidLock } from '../../util/process/pid-lock.js';
import { sleep } from '../../util/sleep.js';
import type { ProgressCallback } from '../engine/image.js';

class Held extends Error {
  constructor(readonly holder: LockHolder) {
    super('held');
  }
}

/**
 * Run `build` holding the instance's build lock (host-private state), waiting for a build that
 * another process (a watch's kernel, a tick, `container up`) runs meanwhile: two builds of one
 * instance at once would share its build link and image tag. A holder that died is taken over.
 */
export async function withBuildLock<T>(instance: Instance, waitMs: number, progress: { logger: Logger; onProgress?: ProgressCallback | undefined }, build: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + waitMs;
  let told = false;
  let lock: PidLock | undefined;
  for (let pause = 100; lock === undefined; pause = Math.min(pause * 2, 2_000)) {
    try {
      lock = await acquirePidLock(instance.paths.buildLock, (holder) => new Held(holder));
    } catch (error) {
      if (!(error instanceof Held)) throw error;
      if (Date.now() > deadline) {
        throw new CodedError(
          'IMAGE_BUILD_FAILED',
          `The image of ${instance.name} is still being built by process ${error.holder.pid} (since ${error.holder.started}), after ${Math.round(waitMs / 1000)} s of waiting for it. Try again when it ends; see agent-kernel logs ${instance.name}.`,
        );
      }
      if (!told) {
        told = true;
        progress.onProgress?.(`waiting for the image build process ${error.holder.pid} runs`);
        progress.logger.info({ holder: error.holder.pid }, 'waiting for another process building the image');
      }
      await sleep(pause);
    }
  }
  try {
    return await build();
  } finally {
    await lock.release();
  }
}
