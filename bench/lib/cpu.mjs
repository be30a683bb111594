/**
 * CPU seconds a process has used (user + system, from /proc/<pid>/stat), and the host PIDs
 * of an instance's tmux processes (the container's processes are visible from the host).
 */
import { readFile } from 'node:fs/promises';
import { containerOf } from './instance.mjs';

const TICKS_PER_SECOND = 100;

export async function cpuSeconds(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / TICKS_PER_SECOND;
}

/** The instance's tmux server and its control-mode client (`tmux -C attach`), as host PIDs. */
export async function tmuxPids(instanceName) {
  const top = await (await containerOf(instanceName)).top({ ps_args: '-eo pid,args' });
  const pids = { server: [], control: [] };
  for (const [pid, args] of top.Processes ?? []) {
    if (!/^tmux -L agent-kernel\b/.test(args)) continue;
    if (/ -C attach\b/.test(args)) pids.control.push(Number(pid));
    else if (/ new-session\b/.test(args)) pids.server.push(Number(pid));
  }
  return pids;
}

/** The CPU seconds of every PID in `pids`, summed. */
export async function totalCpu(pids) {
  let sum = 0;
  for (const pid of pids) sum += await cpuSeconds(pid);
  return sum;
}
