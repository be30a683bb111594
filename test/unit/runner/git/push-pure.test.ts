import { describe, expect, it } from 'vitest';
import { BRANCH_NAME, isRemoteAddress, parseAgentConfig } from '../../../../src/config/agent-config.js';
import { effectiveConfig } from '../../../../src/config/operator-config.js';
import { gitErrorLine, hostGitEnv, parsePushPorcelain } from '../../../../src/runner/git/host-git.js';
import { localRemotePath, remoteInsideData } from '../../../../src/runner/git/push.js';

describe('runner.push config', () => {
  it('is off when absent, and gets its defaults when given', () => {
    expect(parseAgentConfig({}).runner.push).toBeUndefined();
    expect(parseAgentConfig({ runner: { push: { remote: 'git@github.com:me/agent.git' } } }).runner.push).toEqual({
      remote: 'git@github.com:me/agent.git',
      force: false,
      max_bundle_mb: 1024,
    });
  });

  it('comes from the operator only: the agent\'s file naming a remote is ignored and reported', () => {
    const files = { operator: 'op.json', agent: 'agent_config.json' };
    const { config, ignored } = effectiveConfig({}, { runner: { push: { remote: '/tmp/mine.git', force: true } } }, files);
    expect(config.runner.push).toBeUndefined();
    expect(ignored).toEqual(expect.arrayContaining(['runner.push.remote', 'runner.push.force']));
    expect(effectiveConfig({ runner: { push: { remote: '/srv/a.git' } } }, { runner: { push: { remote: '/tmp/mine.git' } } }, files).config.runner.push?.remote).toBe('/srv/a.git');
  });

  it.each([
    ['ssh://git@host/repo.git', true],
    ['https://example.com/r.git', true],
    ['git@github.com:me/agent.git', true],
    ['file:///srv/agent.git', true],
    ['/srv/git/agent.git', true],
    ['relative/repo.git', false],
    ['../repo.git', false],
    ['--upload-pack=touch /tmp/x', false],
    ['-oProxyCommand=x', false],
    ['', false],
  ])('remote %j accepted: %s', (remote, ok) => {
    expect(isRemoteAddress(remote)).toBe(ok);
    const parse = () => parseAgentConfig({ runner: { push: { remote } } });
    if (ok) expect(parse).not.toThrow();
    else expect(parse).toThrow(/runner\.push\.remote/);
  });

  it.each([
    ['main', true],
    ['agent/work-1', true],
    ['release-2.0', true],
    ['-x', false],
    ['a..b', false],
    ['a//b', false],
    ['.hidden', false],
    ['a/.b', false],
    ['x.lock', false],
    ['x/', false],
    ['x.', false],
    ['HEAD@{1}', false],
    ['a b', false],
    ['main\n--force', false],
    ['', false],
  ])('branch %j accepted: %s', (branch, ok) => {
    expect(BRANCH_NAME.test(branch)).toBe(ok);
  });
});

describe('host git', () => {
  it('drops variables that point git at another repository, keeps the operator\'s others, never prompts', () => {
    const env = hostGitEnv({ GIT_DIR: '/data/.git', GIT_WORK_TREE: '/data', GIT_OBJECT_DIRECTORY: '/x', GIT_ALTERNATE_OBJECT_DIRECTORIES: '/y', GIT_SSH_COMMAND: 'ssh -i k', HOME: '/home/op', GIT_TERMINAL_PROMPT: '1' });
    expect(env).toEqual({ GIT_SSH_COMMAND: 'ssh -i k', HOME: '/home/op', GIT_TERMINAL_PROMPT: '0' });
  });

  it('reads push --porcelain output', () => {
    const out = 'To /srv/r.git\n \trefs/heads/main:refs/heads/main\tabc..def\nDone\n';
    expect(parsePushPorcelain(out)).toEqual([{ flag: 'fast-forward', refs: 'refs/heads/main:refs/heads/main', summary: 'abc..def' }]);
    expect(parsePushPorcelain('To x\n!\trefs/heads/main:refs/heads/main\t[rejected] (non-fast-forward)\nDone\n')[0]).toMatchObject({ flag: 'rejected', summary: '[rejected] (non-fast-forward)' });
    expect(parsePushPorcelain('=\trefs/heads/main:refs/heads/main\t[up to date]\n')[0]?.flag).toBe('up-to-date');
    expect(parsePushPorcelain('*\trefs/heads/main:refs/heads/main\t[new branch]\n')[0]?.flag).toBe('new');
    expect(parsePushPorcelain('fatal: nope\n')).toEqual([]);
  });

  it('picks the line of git\'s stderr that says what failed', () => {
    expect(gitErrorLine('hint: do this\nfatal: repository not found\nhint: more\n')).toBe('fatal: repository not found');
    expect(gitErrorLine('')).toBe('no message');
  });
});

describe('a local remote inside the data directory', () => {
  it('is refused (its hooks would be the agent\'s); one outside is not', async () => {
    expect(localRemotePath('/srv/a.git')).toBe('/srv/a.git');
    expect(localRemotePath('file:///srv/a.git')).toBe('/srv/a.git');
    expect(localRemotePath('ssh://h/a.git')).toBeUndefined();
    expect(await remoteInsideData('/data/agent/remote.git', '/data/agent')).toMatch(/inside the data directory/);
    expect(await remoteInsideData('file:///data/agent/../agent/r.git', '/data/agent')).toMatch(/inside the data directory/);
    expect(await remoteInsideData('/data/agent', '/data/agent')).toMatch(/inside the data directory/);
    expect(await remoteInsideData('/data/agent-backup.git', '/data/agent')).toBeUndefined();
    expect(await remoteInsideData('git@h:data/agent', '/data/agent')).toBeUndefined();
  });
});
