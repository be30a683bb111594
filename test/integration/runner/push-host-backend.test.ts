import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { pushAgentBranch } from '../../../src/runner/git/push.js';
import { HostSandbox } from '../../../src/sandbox/host-sandbox.js';

const run = promisify(execFile);
const env = { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@example.com' };
const git = async (args: string[]) => (await run('git', args, { env })).stdout.trim();

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The host backend (`container.backend: host`) takes the same path: bundle, mirror, push. */
it('pushes with the host backend, on a branch the repo names, and says when there is nothing yet', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ak-push-host-'));
  const data = path.join(dir, 'data');
  const remote = path.join(dir, 'remote.git');
  await git(['init', '-q', '-b', 'work', data]);
  await git(['init', '-q', '--bare', remote]);
  const push = () =>
    pushAgentBranch({
      sandbox: new HostSandbox({ cwd: data }),
      dataDir: data,
      workDir: path.join(dir as string, 'state', 'push'),
      config: { remote, force: false, max_bundle_mb: 1024 },
      env,
      logger: silentLogger(),
    });
  expect(await push()).toMatchObject({ status: 'nothing', branch: 'work' });
  await writeFile(path.join(data, 'a.txt'), 'a\n');
  await git(['-C', data, 'add', 'a.txt']);
  await git(['-C', data, 'commit', '-qm', 'a']);
  const tip = await git(['-C', data, 'rev-parse', 'HEAD']);
  expect(await push()).toMatchObject({ status: 'pushed', branch: 'work', commit: tip });
  expect(await git(['--git-dir', remote, 'rev-parse', 'refs/heads/work'])).toBe(tip);
});
