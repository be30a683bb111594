import { instancePaths } from '../../config/paths.js';
import { loadRegistry } from '../../config/registry.js';
import { describeError } from '../../errors.js';
import { readPaused } from '../tick/paused.js';
import { readSuspended } from '../../sandbox/container/suspended.js';
import { loadState, type TickRecord } from '../../state/runner-state.js';

export interface InstanceSummary {
  name: string;
  dir: string;
  paused?: string;
  /** Suspended (kernel-runner suspend): since when, and the snapshot that holds its container. */
  suspended?: { at: string; snapshot: string };
  running?: TickRecord;
  last?: TickRecord;
  /** Set when the data dir or its state cannot be read. */
  problem?: string;
}

/** Every registered instance with what an operator wants at a glance. */
export async function listInstances(env: NodeJS.ProcessEnv = process.env): Promise<InstanceSummary[]> {
  const registry = await loadRegistry(env);
  const summaries: InstanceSummary[] = [];
  for (const [name, entry] of Object.entries(registry.instances).sort(([a], [b]) => a.localeCompare(b))) {
    const summary: InstanceSummary = { name, dir: entry.dir };
    try {
      const paused = await readPaused(instancePaths(name, entry.dir, env));
      if (paused) summary.paused = paused.split('\n')[0] ?? paused;
      const suspended = await readSuspended(instancePaths(name, entry.dir, env));
      if (suspended) summary.suspended = suspended;
      const state = await loadState(instancePaths(name, entry.dir, env).state);
      if (state.current) summary.running = state.current;
      if (state.last) summary.last = state.last;
    } catch (error) {
      summary.problem = describeError(error).split('\n')[0];
    }
    summaries.push(summary);
  }
  return summaries;
}
