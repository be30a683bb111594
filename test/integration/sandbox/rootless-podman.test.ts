import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BASE_IMAGE } from '../../../src/sandbox/engine/bootstrap.js';
import { type Engine, connectEngine } from '../../../src/sandbox/engine/engine.js';
import { LABEL } from '../../../src/sandbox/engine/image.js';
import { pollUntil } from '../../helpers/poll.js';
import { TEST_IMAGE } from '../../helpers/test-instance.js';
import { BIN, ROOT, textOf } from '../server/helpers.js';

const run = promisify(execFile);

/**
 * Rootless Podman, the whole stack as an unprivileged user: a user made for the test, with its own
 * subordinate ids and its own Podman service, inits an instance, brings its container up (egress
 * proxy and link included) and serves the MCP tools; no process of ours runs as root. Runs in CI's
 * Podman pass (AGENT_KERNEL_ENGINE=podman: ensure-engine.sh installed Podman) as root, which it needs
 * to make the user.
 */
const podmanPass = process.env.AGENT_KERNEL_ENGINE === 'podman' && process.getuid?.() === 0;

describe.skipIf(!podmanPass)('rootless Podman: an instance run by an unprivileged user', () => {
  const user = `akrl${randomBytes(3).toString('hex')}`;
  const name = 'rl';
  let uid = 0;
  let home = '';
  let runtimeDir = '';
  let service: ChildProcess | undefined;
  let rootless: Engine;
  const env = (): string[] => [`PATH=${process.env.PATH ?? '/usr/bin:/bin'}`, `HOME=${home}`, `XDG_RUNTIME_DIR=${runtimeDir}`];
  /** argv as the user: setpriv changes ids and execs (no root parent stays behind), with a clean environment. */
  const userArgv = (argv: string[]): string[] => ['--reuid', String(uid), '--regid', String(uid), '--init-groups', '--', 'env', '-i', ...env(), ...argv];
  const asUser = (argv: string[], timeout = 600_000) => run('setpriv', userArgv(argv), { timeout, maxBuffer: 16 * 1024 * 1024 });
  const uidOf = (pid: number): number => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

  beforeAll(async () => {
    await run('useradd', ['-m', '-s', '/bin/bash', user]);
    // Its own range, far from dockremap's and from the one useradd may have given it.
    await run('usermod', ['--add-subuids', '600000-665535', '--add-subgids', '600000-665535', user]);
    uid = Number((await run('id', ['-u', user])).stdout.trim());
    expect(Number((await run('id', ['-g', user])).stdout.trim())).toBe(uid);
    home = `/home/${user}`;
    runtimeDir = `/run/user/${uid}`;
    await run('install', ['-d', '-m', '700', '-o', user, '-g', user, runtimeDir, `${runtimeDir}/podman`]);
    const socket = `unix://${runtimeDir}/podman/podman.sock`;
    service = spawn('setpriv', userArgv(['podman', '--runtime', 'runc', '--cgroup-manager', 'cgroupfs', 'system', 'service', '--time=0', socket]), { stdio: 'ignore' });
    rootless = await pollUntil(() => connectEngine({ socket, timeoutMs: 2000 }).catch(() => undefined), 'the rootless Podman service answers', { timeoutMs: 60_000 });
    // Its own storage starts empty: the base, test and egress images come from the root engine, through both APIs.
    const root = await connectEngine();
    const egress = await root.docker.listImages({ filters: { label: [LABEL.egressImage] } });
    for (const image of [DEFAULT_BASE_IMAGE, TEST_IMAGE, ...egress.flatMap((i) => i.RepoTags ?? [])]) {
      const stream = await root.docker.getImage(image).get();
      await rootless.docker.loadImage(stream).then((loaded) => new Promise((resolve, reject) => rootless.docker.modem.followProgress(loaded, (error) => (error ? reject(error) : resolve(undefined)))));
    }
    await asUser([process.execPath, path.join(ROOT, 'dist', 'cli', 'kernel-runner.js'), 'init', name, `${home}/${name}`]);
    await asUser(['sh', '-c', `printf '%s\\n' "$1" > "$HOME/.config/agent-kernel/instances/${name}.json" && printf 'FROM %s\\n' "$2" > "$HOME/${name}/system/container/Containerfile"`, 'sh', JSON.stringify({ container: { engine: 'podman', base_images: [TEST_IMAGE] } }), TEST_IMAGE]);
  }, 900_000);

  afterAll(async () => {
    if (rootless) await asUser([process.execPath, BIN, 'container', 'rm', name], 120_000).catch(() => undefined);
    if (service?.pid !== undefined) service.kill('SIGTERM');
    // What is left of the user's (conmon, Podman's pause process), by PID, then the user.
    for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number)) {
      try {
        if (uidOf(pid) === uid) process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await run('userdel', ['-r', '-f', user]).catch(() => undefined);
    await run('rm', ['-rf', runtimeDir]).catch(() => undefined);
  }, 180_000);

  it('container up and doctor as the user: the boundary is the rootless engine, the egress proxy runs', async () => {
    const up = await asUser([process.execPath, BIN, 'container', 'up', name]);
    expect(up.stdout + up.stderr).toContain(`engine: podman`);
    const doctor = await asUser([process.execPath, BIN, 'doctor', name]).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    expect(doctor.stdout).toMatch(/ok +podman +rootless, runtime runc/);
    expect(doctor.stdout).toMatch(/ok +boundary +rootless engine/);
    expect(doctor.stdout).toMatch(/ok +network +allowlist: .*proxy .* running/);
  }, 600_000);

  it('login, type, wait through the MCP server the user runs; container root is the user on the host, and nothing of ours is root', async () => {
    const transport = new StdioClientTransport({ command: 'setpriv', args: userArgv([process.execPath, BIN, 'serve', name]), stderr: 'pipe' });
    const client = new Client({ name: 'rootless-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const callTool = async (tool: string, args: Record<string, unknown> = {}) => {
        const result = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 300_000 })) as CallToolResult;
        expect(result.isError, textOf(result)).toBeFalsy();
        return result;
      };
      const call = async (tool: string, args: Record<string, unknown> = {}) => textOf(await callTool(tool, args));
      await call('login');
      const opened = await callTool('open');
      const tty = (opened.structuredContent as { tty?: number } | undefined)?.tty ?? Number(/\b(\d+)\b/.exec(textOf(opened))?.[1]);
      await call('wait', { timeout: 5 });
      await call('type', { tty, expect: 'bash', text: `touch ${home}/${name}/made-inside && echo "inside-$(id -u)-$((6*7))"` });
      const seen = await pollUntil(async () => {
        const text = await call('wait', { timeout: 5 });
        return /inside-0-42/.test(text) ? text : undefined;
      }, 'the command output in wait', { timeoutMs: 60_000 });
      expect(seen).toContain('inside-0-42');
      // Root in the container made the file: on the host it is the user's.
      const made = await run('stat', ['-c', '%u', `${home}/${name}/made-inside`]);
      expect(Number(made.stdout.trim())).toBe(uid);
      // The service, the MCP server (setpriv exec'd into both: these PIDs are theirs) and the container's init are the user's.
      const info = await rootless.docker.getContainer(`agent-kernel-${name}`).inspect();
      for (const pid of [service?.pid ?? 0, transport.pid ?? 0, info.State.Pid]) expect([pid, uidOf(pid)]).toEqual([pid, uid]);
    } finally {
      await client.close();
    }
  }, 600_000);
});
