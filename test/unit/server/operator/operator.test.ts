import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attachArgv, dockerHostFor, listWindowsArgv } from '../../../../src/server/operator/attach-command.js';
import { formatTtyTable, readTtyStatuses } from '../../../../src/server/operator/tty-status.js';

describe('attachArgv', () => {
  it('attaches read-only through docker exec -it on the kernel socket', () => {
    expect(attachArgv({ backend: 'docker', instanceName: 'foo' }, 3, false)).toEqual([
      'docker', 'exec', '-it', '-e', 'TERM=xterm-256color', 'agent-kernel-foo', 'tmux', '-L', 'agent-kernel', 'attach', '-r', '-t', 'kernel:3',
    ]);
  });
  it('drops -r with --write, runs as the configured user, and uses the per-instance socket on the host', () => {
    expect(attachArgv({ backend: 'docker', instanceName: 'foo', user: 'agent' }, 0, true)).toContain('-u');
    expect(attachArgv({ backend: 'docker', instanceName: 'foo' }, 0, true)).not.toContain('-r');
    expect(attachArgv({ backend: 'host', instanceName: 'foo' }, 2, false)).toEqual(['env', '-u', 'TMUX', 'tmux', '-L', 'agent-kernel-foo', 'attach', '-r', '-t', 'kernel:2']);
  });
  it('lists windows without a terminal', () => {
    expect(listWindowsArgv({ backend: 'docker', instanceName: 'foo' })).not.toContain('-it');
  });
  it('turns engine_socket into DOCKER_HOST', () => {
    expect(dockerHostFor('/run/podman/podman.sock')).toBe('unix:///run/podman/podman.sock');
    expect(dockerHostFor('tcp://10.0.0.2:2375')).toBe('tcp://10.0.0.2:2375');
    expect(dockerHostFor(undefined)).toBeUndefined();
  });
});

describe('ls', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-ls-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every tty_N/status, shows lost terminals, and prints a table', async () => {
    const status = (tty: number, extra: Record<string, unknown>) =>
      JSON.stringify({ tty, command: 'bash', program: 'bash', alive: true, lastActivity: '2026-11-21T23:50:01.123Z', highWaterMark: 0, unseen: false, cols: 120, rows: 40, fullScreen: false, ...extra });
    for (const [tty, extra] of [[0, {}], [2, { program: 'python3', unseen: true }], [11, { alive: false, exitCode: 130 }]] as const) {
      await mkdir(path.join(dir, `tty_${tty}`), { recursive: true });
      await writeFile(path.join(dir, `tty_${tty}`, 'status'), status(tty, extra));
    }
    await mkdir(path.join(dir, 'tty_5'));
    await writeFile(path.join(dir, 'tty_5', 'scrollback.prev'), 'old');
    await writeFile(path.join(dir, 'registry.json'), '{}');
    const rows = await readTtyStatuses(dir);
    expect(rows.map((r) => [r.tty, r.state, r.unseen])).toEqual([[0, 'running', false], [2, 'running', true], [5, 'lost', false], [11, 'exited (130)', false]]);
    expect(formatTtyTable(rows).split('\n')).toEqual([
      'TTY  PROGRAM  STATE         UNSEEN  LAST ACTIVITY         COMMAND',
      '0    bash     running       -       2026-11-21T23:50:01Z  bash',
      '2    python3  running       yes     2026-11-21T23:50:01Z  bash',
      '5    -        lost          -                             -',
      '11   bash     exited (130)  -       2026-11-21T23:50:01Z  bash',
    ]);
  });

  it('says so when there are no terminals', async () => {
    expect(formatTtyTable(await readTtyStatuses(path.join(dir, 'missing')))).toMatch(/^No terminals/);
  });
});
