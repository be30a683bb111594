import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { DEFAULT_CONTAINERFILE } from '../../../src/sandbox/engine/build-context.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { CONTAINER_ULIMITS } from '../../../src/sandbox/engine/ulimits.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { GIT_TEST_IMAGE } from '../../helpers/git-image.js';

const run = promisify(execFile);

/** The built-in Containerfile's git setup: its `RUN git config` step, as written there. */
function gitSetupStep(): string {
  const text = readFileSync(DEFAULT_CONTAINERFILE, 'utf8');
  const step = /^RUN git config(?:[^\n]*\\\n)*[^\n]*/m.exec(text)?.[0];
  if (!step) throw new Error(`${DEFAULT_CONTAINERFILE} has no RUN git config step`);
  return step;
}

// A new instance's first commit works in its container: the built-in image sets an identity
// and trusts the data directory (owned by the host's user). Built from the test image with git
// plus that step (the built-in image itself needs the network for its packages).
describeWithEngine("the built-in image's git commits on the first try", () => {
  const tag = `agent-kernel-test/default-git:${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    await run('docker', ['rmi', '-f', tag]).catch(() => undefined);
  });

  it('an empty repo takes a commit, without any git config of the agent, in a folder another user owns', async () => {
    const build = spawn('docker', ['build', '-q', '--network', 'none', '-t', tag, '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let errors = '';
    build.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    build.stdin.end(`FROM ${GIT_TEST_IMAGE}\n${gitSetupStep()}\n`);
    expect(await new Promise((resolve) => build.on('exit', resolve)), errors).toBe(0);
    const script = 'mkdir /data && chown 1000:1000 /data && cd /data && git init -q && git commit -q --allow-empty -m first && git --no-pager log --format="%an <%ae> on %D"';
    // Through the engine's API (the docker CLI's `run` cannot attach to Podman's service), with the limits every container of ours gets.
    const engine = await connectEngine();
    const container = await engine.docker.createContainer({ Image: tag, Cmd: ['sh', '-c', script], Tty: true, HostConfig: { NetworkMode: 'none', Ulimits: CONTAINER_ULIMITS } });
    try {
      await container.start();
      expect(((await container.wait()) as { StatusCode: number }).StatusCode).toBe(0);
      const stdout = String(await container.logs({ stdout: true, stderr: true, follow: false }));
      expect(stdout.trim()).toBe('agent <agent@agent-kernel.invalid> on HEAD -> main');
    } finally {
      await container.remove({ force: true });
    }
  }, 120_000);
});
