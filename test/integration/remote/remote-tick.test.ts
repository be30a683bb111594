import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTick } from '../../../src/runner/tick/tick.js';
import { containerName } from '../../../src/sandbox/container/container.js';
import { type Engine, connectEngine, dataVolumeName } from '../../../src/sandbox/engine/engine.js';
import { EngineAgentFiles } from '../../../src/sandbox/files/engine-files.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { AGENT_GIT_SETUP, GIT_CONTAINERFILE, GIT_TEST_IMAGE } from '../../helpers/git-image.js';
import { type RemoteEngine, startRemoteEngine } from '../../helpers/remote-engine.js';
import { type TickTestInstance, tickTestInstance } from '../runner/tick-helpers.js';

const run = promisify(execFile);

/**
 * Ticks with the fake claude on an instance whose engine is remote (the rig's second dockerd,
 * TCP with mutual TLS): the tick hooks the agent keeps in its data directory (a volume there)
 * are found through the engine and run, and the commits it makes there reach the operator's
 * repository through the push mirror. What the agent plants instead of a hooks folder (a link
 * to a folder of scripts elsewhere in its container, a FIFO, a script without its x bit) runs
 * nothing, and the tick still ends well.
 */
describeWithEngine('ticks on a remote engine: hooks and the push mirror', () => {
  let remote: RemoteEngine;
  let engine: Engine;
  let t: TickTestInstance;
  let files: EngineAgentFiles;
  let bare: string;

  const tick = async () => (await startTick(await t.reloaded(), { logger: t.logger, env: t.env })).done;
  const text = async (rel: string) => {
    const bytes = await files.read(rel, { maxBytes: 64 * 1024 });
    return bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');
  };
  const log = async () => (await run('git', ['--git-dir', bare, 'log', '--format=%s', 'main']).catch(() => ({ stdout: '' }))).stdout.trim();

  beforeAll(async () => {
    remote = await startRemoteEngine();
    await remote.loadImage(await connectEngine(), GIT_TEST_IMAGE);
    engine = await connectEngine({ socket: remote.address, env: remote.env });
    bare = path.join(await mkdtemp(path.join(os.tmpdir(), 'ak-rpush-')), 'agent.git');
    await run('git', ['init', '-q', '--bare', bare]);
    t = await tickTestInstance({ push: { remote: bare } }, { container: { network: 'none', engine: remote.address } });
    Object.assign(t.env, { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: remote.certDir });
    await writeFile(t.instance.paths.containerfile, GIT_CONTAINERFILE);
    files = new EngineAgentFiles({ engine, container: containerName(t.name), dataDir: t.dataDir, volume: dataVolumeName(t.name) });
  }, 300_000);

  afterAll(async () => {
    await t?.dispose();
    await remote?.stop();
    if (bare) await rm(path.dirname(bare), { recursive: true, force: true });
  }, 180_000);

  it('runs the hooks on the volume there and pushes the commits made there', async () => {
    // The first tick makes the container and its volume there; nothing to run or push yet.
    expect(await tick()).toMatchObject({ tick: 1, status: 'ok' });
    expect(await log()).toBe('');

    const hook = (body: string) => `#!/bin/sh\n${body}\n`;
    await files.writeAtomic('system/hooks/pre-tick/10-env', hook('env | grep -E "^(DATA_DIR|AGENT_TICK=)" | sort > "$DATA_DIR/pre-tick.env"'), 0o755);
    await files.writeAtomic('system/hooks/pre-tick/20-no-x-bit', hook('touch "$DATA_DIR/no-x-ran"'), 0o644);
    await files.writeAtomic(
      'system/hooks/post-tick/10-commit',
      hook(`set -e\n${AGENT_GIT_SETUP}\ncd "$DATA_DIR"\n[ -d .git ] || git init -q -b main\necho "tick $AGENT_TICK" >> notes.txt\ngit add notes.txt\ngit commit -qm "tick $AGENT_TICK"`),
      0o755,
    );
    // Instead of a pre-stop folder, a link to a folder of scripts elsewhere in the container (never listed, nothing in it runs); a FIFO among the post-tick hooks.
    await engine.docker.getContainer(containerName(t.name)).exec({
      Cmd: ['sh', '-c', `mkdir -p /tmp/evil && printf '#!/bin/sh\\ntouch "$DATA_DIR/evil-ran"\\n' > /tmp/evil/x && chmod +x /tmp/evil/x && ln -sfn /tmp/evil '${t.dataDir}/system/hooks/pre-stop' && mkfifo '${t.dataDir}/system/hooks/post-tick/05-fifo'`],
      User: '0',
    }).then(async (exec) => {
      const stream = await exec.start({});
      stream.resume();
      await new Promise((resolve) => stream.once('end', resolve));
    });

    expect(await tick()).toMatchObject({ tick: 2, status: 'ok' });
    expect(await text('pre-tick.env')).toBe(`AGENT_TICK=2\nDATA_DIR=${t.dataDir}\n`);
    expect(await text('no-x-ran')).toBeUndefined();
    expect(await text('evil-ran')).toBeUndefined();
    expect(await log()).toBe('tick 2');

    expect(await tick()).toMatchObject({ tick: 3, status: 'ok' });
    expect(await log()).toBe('tick 3\ntick 2');
  }, 600_000);
});
