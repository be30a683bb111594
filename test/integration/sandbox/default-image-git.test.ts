import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { DEFAULT_CONTAINERFILE } from '../../../src/sandbox/engine/build-context.js';
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
    const script = 'mkdir /data && chown 1000:1000 /data && cd /data && git init -q && git commit -q --allow-empty -m first && git log --format="%an <%ae> on %D"';
    const { stdout } = await run('docker', ['run', '--rm', '--network', 'none', tag, 'sh', '-c', script]);
    expect(stdout.trim()).toBe('agent <agent@agent-kernel.invalid> on HEAD -> main');
  }, 120_000);
});
