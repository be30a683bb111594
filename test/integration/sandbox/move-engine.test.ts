import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sendOperatorMessage } from '../../../src/mail/operator-send.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { removeInstanceResources } from '../../../src/sandbox/container/remove-instance.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { DOCKER_SOCKET, type Engine, ROOTFUL_PODMAN_SOCKET, connectEngine } from '../../../src/sandbox/engine/engine.js';
import { holdTicks } from '../../../src/snapshot/hold.js';
import { loadState } from '../../../src/state/runner-state.js';
import { engineAvailable } from '../../helpers/engine.js';
import { TEST_IMAGE } from '../../helpers/test-instance.js';
import { stdioClient } from '../runner/watch/kernel-clients.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, tickTestInstance } from '../runner/tick-helpers.js';

vi.setConfig({ testTimeout: 900_000, hookTimeout: 900_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const AGENT_KERNEL_BIN = path.join(ROOT, 'dist', 'cli', 'agent-kernel.js');
const run = promisify(execFile);

/** Both engines of this machine, or why not (the move needs two: Docker's socket and rootful Podman's). */
async function bothEngines(): Promise<{ docker: Engine; podman: Engine } | string> {
  if (process.getuid?.() !== 0) return 'not root (rootful Podman)';
  try {
    return { docker: await connectEngine({ socket: DOCKER_SOCKET }), podman: await connectEngine({ socket: ROOTFUL_PODMAN_SOCKET }) };
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'no engine';
  }
}
const engines = engineAvailable() ? await bothEngines() : 'no engine';
// CI's Podman pass keeps Docker running beside Podman for this test: there a missing engine is a failure.
if (typeof engines === 'string' && process.env.AK_TEST_BOTH_ENGINES === '1') {
  throw new Error(`move-engine.test.ts: AK_TEST_BOTH_ENGINES=1 promises Docker (${DOCKER_SOCKET}) and rootful Podman (${ROOTFUL_PODMAN_SOCKET}), but: ${engines}. Start both (scripts/with-engine.sh for Docker, AGENT_KERNEL_ENGINE=podman for Podman), or unset AK_TEST_BOTH_ENGINES.`);
}
if (typeof engines === 'string') console.warn(`move-engine.test.ts skipped: it needs Docker and rootful Podman both answering (${engines}).`);

/** What the agent does in TTY 0 (typed by the fake claude): a change in the container and one in the data directory. */
const AGENT_WORK = `set -e
mkdir -p /root/notes; head -c 100000 /dev/urandom > /root/notes/blob; echo "setting=1" > /etc/agent.conf
mkdir -p "$DATA/work"; head -c 300000 /dev/urandom > "$DATA/work/result.bin"
echo MOVED-WORK-DONE
`;

describe.skipIf(typeof engines === 'string')('kernel-runner move: an instance from Docker to Podman and back', () => {
  const { docker, podman } = engines as { docker: Engine; podman: Engine };
  let t: TickTestInstance;

  beforeAll(async () => {
    // The instance's Containerfile starts FROM the test image: each engine needs it (copied, never pulled).
    for (const [from, to] of [[docker, podman], [podman, docker]] as const) {
      const has = async (engine: Engine) => engine.docker.getImage(TEST_IMAGE).inspect().then(() => true, () => false);
      if ((await has(to)) || !(await has(from))) continue;
      await to.docker.loadImage(await from.docker.getImage(TEST_IMAGE).get());
    }
    t = await tickTestInstance({}, { container: { network: 'none', engine: 'docker' } });
  });
  afterAll(async () => {
    await removeInstanceResources(podman, t.name).catch(() => undefined);
    await removeInstanceResources(docker, t.name).catch(() => undefined);
    await t?.dispose();
  });

  const sh = async (engine: Engine, script: string) =>
    new DockerSandbox({ engine, containerName: containerName(t.name), cwd: '/' }).run(['sh', '-c', script], { user: '0' });
  const digests = async (engine: Engine) => (await sh(engine, 'sha256sum /root/notes/blob /etc/agent.conf')).stdout;
  const operator = async () => JSON.parse(await readFile(t.instance.paths.operatorConfig, 'utf8')) as { container: Record<string, unknown> };
  const runner = (...args: string[]) =>
    run(process.execPath, [KERNEL_RUNNER_BIN, ...args], { env: t.env, maxBuffer: 16 * 1024 * 1024 }).then(
      ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
      (error: { stdout: string; stderr: string; code: number }) => ({ stdout: error.stdout, stderr: error.stderr, code: error.code }),
    );

  it('moves to Podman with every file checked, the terminal reported lost with its scrollback, the history and mail kept; refuses while a tick runs; and moves back', async () => {
    const dataDir = t.dataDir;
    await writeFile(path.join(dataDir, 'agent-work.sh'), AGENT_WORK);
    Object.assign(t.env, { FAKE_CLAUDE_COMMAND: `DATA=${dataDir} sh ${dataDir}/agent-work.sh` });
    await writeFile(t.instance.paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }));
    await sendOperatorMessage(t.instance, { text: '[fake:start-command] do the work' });
    const tick = await runner('tick', t.name);
    expect(tick.code, tick.stderr).toBe(0);
    expect((await loadState(t.instance.paths.state)).last?.tick).toBe(1);
    const before = await digests(docker);
    expect(before).toMatch(/^[0-9a-f]{64} {2}\/root\/notes\/blob\n[0-9a-f]{64} {2}\/etc\/agent.conf\n$/);
    const data = await readFile(path.join(dataDir, 'work', 'result.bin'));

    // A tick holds the instance: the move waits for nobody and says so.
    const held = await holdTicks(t.instance);
    try {
      const refused = await runner('move', t.name, '--engine', 'podman');
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(new RegExp(`${t.name} is running a tick .*wait for it to end, then try again`));
      expect((await operator()).container.engine).toBe('docker');
      expect((await sh(docker, 'true')).exitCode).toBe(0);
    } finally {
      await held.release();
    }

    const moved = await runner('move', t.name, '--engine', 'podman');
    expect(moved.code, moved.stderr + moved.stdout).toBe(0);
    expect(moved.stdout).toMatch(new RegExp(`^Moved ${t.name} from docker .* to podman .* restored and checked against their digests; the container runs there\\.`));
    expect(moved.stdout).toMatch(/Terminals lost to the restart .*tty 0/);
    expect((await operator()).container.engine).toBe('podman');
    // On Podman now, with the same files; gone from Docker.
    expect(await digests(podman)).toBe(before);
    expect((await podman.docker.getContainer(containerName(t.name)).inspect()).State.Running).toBe(true);
    expect(await docker.docker.getContainer(containerName(t.name)).inspect().then(() => 'there', () => 'gone')).toBe('gone');
    expect((await readFile(path.join(dataDir, 'work', 'result.bin'))).equals(data)).toBe(true);
    // Its root (no capabilities) owns the data directory there: the agent writes in it as before.
    const wrote = await sh(podman, `echo after > ${dataDir}/work/after-move.txt && stat -c %u ${dataDir}/work/result.bin`);
    expect(wrote.exitCode, wrote.stderr).toBe(0);
    expect(wrote.stdout).toBe('0\n');
    expect((await loadState(t.instance.paths.state)).last?.tick).toBe(1);

    // The kernel that starts next (on Podman) reports TTY 0 lost to the restart, its scrollback kept.
    const client = await stdioClient(AGENT_KERNEL_BIN, dataDir, t.env);
    try {
      const login = (await client.call('login')).structuredContent as { lost?: Array<{ tty: number; scrollbackPrev?: string }> };
      const lost = login.lost?.find((l) => l.tty === 0);
      expect(lost, JSON.stringify(login)).toBeDefined();
      expect((await sh(podman, `cat ${lost?.scrollbackPrev ?? '/nonexistent'}`)).stdout).toContain('MOVED-WORK-DONE');
    } finally {
      await client.close();
    }

    const back = await runner('move', t.name, '--engine', 'docker');
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(new RegExp(`^Moved ${t.name} from podman .* to docker `));
    expect(await digests(docker)).toBe(before);
    expect(await podman.docker.getContainer(containerName(t.name)).inspect().then(() => 'there', () => 'gone')).toBe('gone');
    expect((await operator()).container.engine).toBe('docker');

    const again = await runner('move', t.name, '--engine', 'docker');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already runs on docker .*nothing to move/);
  });
});
