import type { Instance } from '../../config/instance.js';
import type { Logger } from '../../log/logger.js';
import { groupAlive, signalOwnGroup, waitGroupGone } from '../../util/process/process-group.js';
import { loadState } from '../../state/runner-state.js';

/** How long a tick waits for the killed group to be gone. */
const ORPHAN_GONE_MS = 10_000;

/** A runner that died mid-tick may have left its harness (and MCP server) running: stop that group first. */
export async function killOrphanedHarness(instance: Instance, logger: Logger): Promise<void> {
  const previous = (await loadState(instance.paths.state).catch(() => undefined))?.current;
  const pgid = previous?.harness_pgid;
  if (!pgid || !groupAlive(pgid)) return;
  // Only the group recorded (host-private state.json) and still led by the very process started then.
  if (!signalOwnGroup(pgid, previous.harness_start, 'SIGKILL')) {
    logger.warn({ tick: previous.tick, pgid }, 'a process group with the recorded harness PGID runs, but it is not the harness started then (PID reused): left alone');
    return;
  }
  logger.warn({ tick: previous.tick, pgid }, 'the harness of a tick whose runner died was still running: killed its process group');
  // Its serve may host the instance's kernel: gone before this tick looks for one, not dying under its first request.
  if (!(await waitGroupGone(pgid, ORPHAN_GONE_MS))) logger.warn({ tick: previous.tick, pgid }, `the killed harness group was still there after ${ORPHAN_GONE_MS / 1000} s`);
}
