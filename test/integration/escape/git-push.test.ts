import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import type { PushConfig } from '../../../src/config/agent-config.js';
import { silentLogger } from '../../../src/log/logger.js';
import { pushAgentBranch } from '../../../src/runner/git/push.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { AGENT_GIT_SETUP, GIT_CONTAINERFILE } from '../../helpers/git-image.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 600_000 });
const execFileAsync = promisify(execFile);
const hostGit = async (args: string[]) => (await execFileAsync('git', args, { env: { ...process.env, GIT_AUTHOR_NAME: 'op', GIT_AUTHOR_EMAIL: 'op@example.com', GIT_COMMITTER_NAME: 'op', GIT_COMMITTER_EMAIL: 'op@example.com' } })).stdout.trim();

/**
 * The post-tick push, attacked from inside a real container: the agent (root there) plants
 * hooks, config, includes, helpers, alternates, a linked .git and bad bundles. Host git only
 * ever opens its own mirror, so no host canary appears, and the operator's remote gets exactly
 * the agent's commits.
 */
describeWithEngine('escape: the post-tick git push', () => {
  let test: TestInstance;
  let sandbox: Sandbox;
  let hostDir: string;
  let canaries: string;
  let remote: string;
  let config: PushConfig;

  async function agent(script: string): Promise<string> {
    const result = await sandbox.run(['sh', '-c', script], { timeoutMs: 60_000 });
    if (result.exitCode !== 0) throw new Error(`in the container: ${script}: ${result.stderr}`);
    return result.stdout.trim();
  }
  const push = (overrides: Partial<PushConfig> = {}) =>
    pushAgentBranch({ sandbox, dataDir: test.dataDir, workDir: test.instance.paths.push, config: { ...config, ...overrides }, env: process.env, logger: silentLogger() });
  const agentCommit = (message: string) => agent(`cd '${test.dataDir}' && echo '${message}' >> notes.txt && git add notes.txt && git commit -qm '${message}' && git rev-parse HEAD`);
  const remoteLog = () => hostGit(['--git-dir', remote, 'rev-list', 'refs/heads/main']).catch(() => '');
  const canariesFound = async () => readdir(canaries);

  beforeAll(async () => {
    hostDir = await mkdtemp(path.join(os.tmpdir(), 'ak-push-'));
    canaries = path.join(hostDir, 'canaries');
    await mkdir(canaries);
    test = await createTestInstance({ containerfile: GIT_CONTAINERFILE, config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
    await agent(`${AGENT_GIT_SETUP} && git init -q -b main '${test.dataDir}'`);
    expect((await sandbox.run(['test', '-e', canaries])).exitCode).not.toBe(0);
  });
  afterAll(async () => {
    await test?.cleanup();
    await rm(hostDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    remote = await mkdtemp(path.join(hostDir, 'remote-'));
    await hostGit(['init', '-q', '--bare', remote]);
    config = { remote, force: false, max_bundle_mb: 1024 };
  });

  it('pushes the agent\'s commits to the operator\'s remote, then only new ones, and leaves a diverged remote alone', async () => {
    const first = await agentCommit('one');
    expect(await push()).toMatchObject({ status: 'pushed', branch: 'main', commit: first });
    expect(await remoteLog()).toBe(first);

    const second = await agentCommit('two');
    expect(await push()).toMatchObject({ status: 'pushed', commit: second });
    expect((await remoteLog()).split('\n')).toEqual([second, first]);
    expect(await push()).toMatchObject({ status: 'up-to-date', commit: second });

    // Someone else pushed to the remote: the agent's next commit is not forced over it.
    const tree = await hostGit(['--git-dir', remote, 'rev-parse', `${second}^{tree}`]);
    const foreign = await hostGit(['--git-dir', remote, 'commit-tree', tree, '-p', second, '-m', 'operator']);
    await hostGit(['--git-dir', remote, 'update-ref', 'refs/heads/main', foreign]);
    await agentCommit('three');
    expect(await push()).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/rejected/) });
    expect((await remoteLog()).split('\n')[0]).toBe(foreign);
    // The operator may choose to force.
    expect(await push({ force: true })).toMatchObject({ status: 'pushed' });
  });

  it('runs nothing the data repo configures on the host: hooks, hooksPath, includes, helpers, fsmonitor, pack programs, alternates', async () => {
    const d = test.dataDir;
    // A host repo the container cannot see, holding a secret commit: the alternates target.
    const secretRepo = path.join(hostDir, 'secret.git');
    await hostGit(['init', '-q', '--bare', secretRepo]);
    const secretBlob = await execFileAsync('sh', ['-c', `echo HOST-SECRET | git --git-dir='${secretRepo}' hash-object -w --stdin`]).then((r) => r.stdout.trim());
    const writer = (name: string) => `#!/bin/sh\necho ran 2>/dev/null > '${canaries}/${name}'\nexit 0\n`;
    const plant = (file: string, name: string) => `printf '%s' "${writer(name).replace(/\n/g, '\\n')}" | sed 's/\\\\n/\\n/g' > '${file}' && chmod +x '${file}'`;
    await agent(
      [
        `cd '${d}' && mkdir -p .evil/hooks`,
        ...['pre-push', 'post-checkout', 'reference-transaction', 'pre-commit', 'post-merge'].flatMap((hook) => [plant(`.git/hooks/${hook}`, `git-hooks-${hook}`), plant(`.evil/hooks/${hook}`, `hooksPath-${hook}`)]),
        plant('.evil/ssh', 'sshCommand'),
        plant('.evil/credential', 'credential-helper'),
        plant('.evil/fsmonitor', 'fsmonitor'),
        `printf '#!/bin/sh\\necho ran 2>/dev/null > %s/receivepack\\nexec git-receive-pack "$@"\\n' '${canaries}' > .evil/receive && chmod +x .evil/receive`,
        `printf '#!/bin/sh\\necho ran 2>/dev/null > %s/uploadpack\\nexec git-upload-pack "$@"\\n' '${canaries}' > .evil/upload && chmod +x .evil/upload`,
        `printf '[core]\\n\\tsshCommand = ${d}/.evil/ssh\\n[credential]\\n\\thelper = ${d}/.evil/credential\\n' > .evil/include.cfg`,
        `git config core.hooksPath '${d}/.evil/hooks'`,
        `git config include.path '${d}/.evil/include.cfg'`,
        `git config core.fsmonitor '${d}/.evil/fsmonitor'`,
        `git remote add origin '${remote}' && git config remote.origin.receivepack '${d}/.evil/receive' && git config remote.origin.uploadpack '${d}/.evil/upload'`,
        `git config remote.origin.pushurl '${remote}'`,
        `echo '${secretRepo}/objects' > .git/objects/info/alternates`,
      ].join(' && '),
    );
    const agentTip = await agentCommit('planted');

    // Inside the container the writers find no canary folder and carry on, so the agent still commits.
    // The trap is armed: host git opened in the data repo (what the runner did before) would run the agent's code.
    const armedRemote = path.join(hostDir, 'armed.git');
    await hostGit(['init', '-q', '--bare', armedRemote]);
    // safe.directory=*: under a user namespace the data repo is the remapped container root's, and git's ownership check
    // alone would stop host git there; an operator with safe.directory=* (usual on CI machines) has no such check.
    await hostGit(['-c', 'safe.directory=*', '-C', d, 'status']).catch(() => '');
    await hostGit(['-c', 'safe.directory=*', '-C', d, 'push', armedRemote, 'main']).catch(() => '');
    await hostGit(['-c', 'safe.directory=*', '-C', d, 'push', 'origin', 'HEAD:refs/heads/armed']).catch(() => '');
    expect(await canariesFound()).toEqual(expect.arrayContaining(['fsmonitor', 'hooksPath-pre-push', 'receivepack']));
    await hostGit(['--git-dir', remote, 'update-ref', '-d', 'refs/heads/armed']);
    for (const name of await canariesFound()) await rm(path.join(canaries, name));

    expect(await push()).toMatchObject({ status: 'pushed', commit: agentTip });
    expect(await canariesFound()).toEqual([]);
    // Exactly the agent's commits, and nothing from the host repo behind the planted alternates.
    expect(await hostGit(['--git-dir', remote, 'for-each-ref', '--format=%(refname)'])).toBe('refs/heads/main');
    expect((await remoteLog()).split('\n')).toEqual((await agent(`git -C '${d}' rev-list main`)).split('\n'));
    await expect(hostGit(['--git-dir', remote, 'cat-file', '-e', secretBlob])).rejects.toThrow();
    // The host's mirror has none of the agent's config.
    expect(await hostGit(['--git-dir', path.join(test.instance.paths.push, 'mirror.git'), 'config', '--local', '--list'])).not.toMatch(/evil|hooksPath|fsmonitor|alternates/);
  });

  it('survives a linked .git, a gitfile, a garbage and an endless bundle: refused and logged, the remote untouched', async () => {
    const d = test.dataDir;
    const tip = await agentCommit('before the attacks');
    expect(await push()).toMatchObject({ status: 'pushed', commit: tip });

    // .git as a link to a host repo path: it dangles in the container, and the host never opens it.
    const hostRepo = path.join(hostDir, 'host-repo');
    await hostGit(['init', '-q', hostRepo]);
    await agent(`cd '${d}' && mv .git .git-real && ln -s '${hostRepo}/.git' .git`);
    expect((await push()).status).toMatch(/nothing|failed/);
    await agent(`cd '${d}' && rm .git && mv .git-real .git`);

    // A "bundle" that is a gitfile: git would follow it to the host repo and fetch (and push) its commits.
    await writeFile(path.join(hostRepo, 'host-secret.txt'), 'HOST-SECRET\n');
    await hostGit(['-C', hostRepo, 'add', 'host-secret.txt']);
    await hostGit(['-C', hostRepo, 'commit', '-qm', 'host secret']);
    await hostGit(['-C', hostRepo, 'branch', '-M', 'main']);
    const hostCommit = await hostGit(['-C', hostRepo, 'rev-parse', 'HEAD']);
    await agent(`printf '#!/bin/sh\\ncase "$*" in *"bundle create"*) echo "gitdir: ${hostRepo}/.git"; exit 0;; esac\\nexec /usr/bin/git "$@"\\n' > /usr/local/bin/git && chmod +x /usr/local/bin/git`);
    await agentCommit('gitfile bundle');
    expect(await push()).toMatchObject({ status: 'failed', step: 'bundle' });
    await expect(hostGit(['--git-dir', remote, 'cat-file', '-e', hostCommit])).rejects.toThrow();

    // A git in the container that answers `bundle create` with garbage, then with an endless stream.
    await agent(`printf '#!/bin/sh\\ncase "$*" in *"bundle create"*) head -c 3000000 /dev/urandom; exit 0;; esac\\nexec /usr/bin/git "$@"\\n' > /usr/local/bin/git && chmod +x /usr/local/bin/git`);
    await agentCommit('garbage bundle');
    expect(await push()).toMatchObject({ status: 'failed', step: 'bundle' });
    await agent(`printf '#!/bin/sh\\ncase "$*" in *"bundle create"*) cat /dev/zero; exit 0;; esac\\nexec /usr/bin/git "$@"\\n' > /usr/local/bin/git`);
    const huge = await push({ max_bundle_mb: 8 });
    expect(huge).toMatchObject({ status: 'failed', step: 'bundle' });
    expect(JSON.stringify(huge)).toContain('larger than');
    // A bundle with a ref it was not asked for, over a valid one, does not move other refs.
    await agent(`printf '#!/bin/sh\\ncase "$*" in *"bundle create"*) exec /usr/bin/git -C "${d}" bundle create - refs/heads/main refs/tags/x 2>/dev/null;; esac\\nexec /usr/bin/git "$@"\\n' > /usr/local/bin/git && git -C '${d}' tag x`);
    expect((await push()).status).toBe('pushed');
    await agent('rm /usr/local/bin/git');

    expect(await readdir(test.instance.paths.push)).toEqual(['mirror.git']);
    expect(await hostGit(['--git-dir', remote, 'for-each-ref', '--format=%(refname)'])).toBe('refs/heads/main');
    expect(await canariesFound()).toEqual([]);
  });

  it('refuses a local remote inside the data directory, even through a link', async () => {
    const inside = path.join(test.dataDir, 'remote.git');
    await agent(`git init -q --bare '${inside}'`);
    expect(await push({ remote: inside })).toMatchObject({ status: 'failed', step: 'remote' });
    const link = path.join(hostDir, 'link-to-data');
    await symlink(test.dataDir, link);
    expect(await push({ remote: path.join(link, 'remote.git') })).toMatchObject({ status: 'failed', step: 'remote' });
  });
});
