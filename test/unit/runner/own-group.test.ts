import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { groupAlive, processStartTime, signalOwnGroup } from '../../../src/util/process/process-group.js';

it('signals a recorded process group only while its leader is the very process recorded', async () => {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  const pgid = child.pid as number;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const started = processStartTime(pgid);
    expect(started).toMatch(/^\d+$/);
    // Another start time: a process that reused the PID. Left alone.
    expect(signalOwnGroup(pgid, String(Number(started) + 1), 'SIGKILL')).toBe(false);
    expect(signalOwnGroup(pgid, undefined, 'SIGKILL')).toBe(false);
    expect(groupAlive(pgid)).toBe(true);
    expect(signalOwnGroup(pgid, started, 'SIGKILL')).toBe(true);
    await exited;
    expect(processStartTime(pgid)).toBeUndefined();
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-pgid, 'SIGKILL');
  }
});
