import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { sendOperatorMessage } from '../../../src/mail/operator-send.js';
import { type AgentStatus, queryStatusSocket, statusSocketPath } from '../../../src/runner/watch/service/status-api.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { loadState } from '../../../src/state/runner-state.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { pollUntil } from '../../helpers/poll.js';
import { stdioClient } from '../runner/watch/kernel-clients.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, tickTestInstance } from '../runner/tick-helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const AGENT_KERNEL_BIN = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');
const LONG = 180_000;
const run = promisify(execFile);

/**
 * What the agent does, typed into TTY 0 by the fake claude each tick: tick 1 installs a package
 * built offline and writes /root, /etc and the data directory; tick 2 deletes all that and
 * removes python3.
 */
const AGENT_WORK = `set -e
if [ ! -e /root/tick1 ]; then
  mkdir -p /tmp/deb/DEBIAN /tmp/deb/usr/bin
  printf 'Package: hello-snap\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: t <t@t>\\nDescription: test\\n' > /tmp/deb/DEBIAN/control
  printf '#!/bin/sh\\necho hello-from-snap\\n' > /tmp/deb/usr/bin/hello-snap; chmod 755 /tmp/deb/usr/bin/hello-snap
  dpkg-deb --build /tmp/deb /root/hello-snap.deb >/dev/null; dpkg -i /root/hello-snap.deb >/dev/null; rm -rf /tmp/deb
  mkdir -p /root/notes; echo "root note" > /root/notes/a.txt; echo "setting=1" > /etc/agent.conf
  mkdir -p "$DATA/work"; head -c 200000 /dev/urandom > "$DATA/work/result.bin"
  echo one > /root/tick1; echo TICK-ONE-DONE
else
  rm -rf /root/notes /etc/agent.conf "$DATA/work" /root/hello-snap.deb
  dpkg -r hello-snap >/dev/null; dpkg -r --force-depends python3 python3-minimal python3.11 python3.11-minimal >/dev/null 2>&1
  echo TICK-TWO-DONE
fi
`;

/** The files tick 1 makes, as `path → sha256`, read inside the container. */
const WATCHED = ['/root/notes/a.txt', '/etc/agent.conf', '/usr/bin/hello-snap', '/root/hello-snap.deb'];

describeWithEngine('rollback under watch: a bad tick undone with one command', () => {
  let t: TickTestInstance | undefined;
  let watch: ChildProcess | undefined;

  afterEach(async () => {
    if (watch && watch.exitCode === null) {
      const exited = new Promise((r) => watch!.once('exit', r));
      watch.kill('SIGTERM');
      await exited;
    }
    watch = undefined;
    await t?.dispose();
    t = undefined;
  });

  it('rollback --before-tick 2 brings back tick 1\'s files and package, keeps the tick history and mail, and login reports the terminal lost with its scrollback', { timeout: 600_000 }, async () => {
    t = await tickTestInstance({});
    const dataDir = t.dataDir;
    await writeFile(path.join(dataDir, 'agent-work.sh'), AGENT_WORK);
    Object.assign(t.env, { FAKE_CLAUDE_COMMAND: `DATA=${dataDir} sh ${dataDir}/agent-work.sh` });
    await writeFile(t.instance.paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }));
    watch = spawn(process.execPath, [KERNEL_RUNNER_BIN, 'watch', t.name], { env: t.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    watch.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const status = async () => (await queryStatusSocket(statusSocketPath(t!.name, t!.env), `/v1/agents/${t!.name}`).catch(() => undefined))?.body as AgentStatus | undefined;
    await pollUntil(async () => (await status())?.kernel?.state === 'ready', 'the kernel ready under watch', { timeoutMs: 90_000 });

    const engine = await connectEngine();
    const inside = new DockerSandbox({ engine, containerName: containerName(t.name), cwd: '/' });
    const sh = async (script: string) => inside.run(['sh', '-c', script], { user: '0' });
    const digests = async () => {
      const out: Record<string, string> = {};
      for (const file of WATCHED) out[file] = (await sh(`sha256sum ${file} 2>/dev/null | cut -c1-64`)).stdout.trim();
      out.data = createHash('sha256').update(await readFile(path.join(dataDir, 'work', 'result.bin')).catch(() => Buffer.alloc(0))).digest('hex');
      return out;
    };

    await sendOperatorMessage(t.instance, { text: '[fake:start-command] tick one' });
    await pollUntil(async () => (await loadState(t!.instance.paths.state)).last?.tick === 1, 'tick 1 to end', { timeoutMs: LONG });
    await pollUntil(async () => (await sh('test -e /root/tick1')).exitCode === 0, 'tick 1\'s work in the container', { timeoutMs: 60_000 });
    const afterTick1 = await digests();
    expect(Object.values(afterTick1).every((d) => d.length === 64)).toBe(true);

    await sendOperatorMessage(t.instance, { text: '[fake:start-command] tick two' });
    await pollUntil(async () => (await loadState(t!.instance.paths.state)).last?.tick === 2, 'tick 2 to end', { timeoutMs: LONG });
    await pollUntil(async () => (await sh('command -v python3')).exitCode !== 0, 'tick 2 to remove python3', { timeoutMs: 60_000 });
    expect((await sh('test -e /root/notes/a.txt')).exitCode).not.toBe(0);

    const history = await loadState(t.instance.paths.state);
    const delivered = (await readdir(t.instance.paths.mail.delivered).catch(() => [] as string[])).sort();
    const listed = await run(process.execPath, [KERNEL_RUNNER_BIN, 'snapshots', t.name], { env: t.env });
    expect(listed.stdout).toMatch(/^\d+ +\S+ +before-tick +2 /m);

    const { stdout } = await run(process.execPath, [KERNEL_RUNNER_BIN, 'rollback', t.name, '--before-tick', '2'], { env: t.env });
    expect(stdout).toMatch(/before tick 2\) in [0-9.]+ s: .* restored and checked against their digests/);
    expect(stdout).toMatch(/Terminals lost to the restart .*tty 0/);

    expect(await digests()).toEqual(afterTick1);
    expect((await sh('hello-snap')).stdout).toBe('hello-from-snap\n');
    expect((await sh('python3 -c "print(6*7)"')).stdout).toBe('42\n');
    // The history of ticks and the post office are the host's, not the snapshot's: intact.
    expect((await loadState(t.instance.paths.state)).last).toEqual(history.last);
    expect((await readdir(t.instance.paths.mail.delivered).catch(() => [] as string[])).sort()).toEqual(delivered);

    // watch's kernel came back on the restored container: login reports TTY 0 lost, its scrollback kept.
    await pollUntil(async () => (await status())?.kernel?.state === 'ready', 'the kernel ready again', { timeoutMs: 90_000 });
    const client = await stdioClient(AGENT_KERNEL_BIN, dataDir, t.env);
    try {
      const login = (await client.call('login')).structuredContent as { lost?: Array<{ tty: number; scrollbackPrev?: string }> };
      const lost = login.lost?.find((l) => l.tty === 0);
      expect(lost, JSON.stringify(login)).toBeDefined();
      expect(lost?.scrollbackPrev).toBeDefined();
      const kept = await sh(`cat ${lost?.scrollbackPrev ?? ''}`);
      expect(kept.stdout).toContain('TICK-ONE-DONE');
    } finally {
      await client.close();
    }
    expect(stderr).not.toMatch(/no snapshot before tick/);
  });
});
