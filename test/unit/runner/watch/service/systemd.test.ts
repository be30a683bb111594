import { describe, expect, it } from 'vitest';
import { renderUnit, unitEnvironment, unitPath } from '../../../../../src/runner/watch/service/systemd.js';

describe('renderUnit', () => {
  const base = { name: 'scout', workingDir: '/home/op/.local/state/agent-kernel/instances/scout', nodePath: '/usr/bin/node', binPath: '/opt/ak/dist/cli/kernel-runner.js', environment: {} };

  it('runs watch with absolute paths and restarts on failure', () => {
    const unit = renderUnit(base);
    expect(unit).toContain('ExecStart=/usr/bin/node /opt/ak/dist/cli/kernel-runner.js watch scout\n');
    expect(unit).toContain('Restart=on-failure\n');
    expect(unit).toContain('WorkingDirectory=/home/op/.local/state/agent-kernel/instances/scout\n');
    expect(unit).toContain('[Install]\nWantedBy=default.target\n');
  });

  it.each([
    ['a space', '/opt/my ak/kr.js', 'ExecStart=/usr/bin/node "/opt/my ak/kr.js" watch scout'],
    ['a percent sign', '/opt/100%/kr.js', 'ExecStart=/usr/bin/node /opt/100%%/kr.js watch scout'],
    ['a dollar sign', '/opt/$HOME/kr.js', 'ExecStart=/usr/bin/node "/opt/$$HOME/kr.js" watch scout'],
    ['a double quote', '/opt/a"b/kr.js', 'ExecStart=/usr/bin/node "/opt/a\\"b/kr.js" watch scout'],
  ])('quotes a bin path with %s', (_what, binPath, line) => {
    expect(renderUnit({ ...base, binPath })).toContain(line + '\n');
  });

  it('writes the environment sorted and escaped, and drops values with newlines', () => {
    const unit = renderUnit({ ...base, environment: { PATH: '/usr/bin:/bin', Z: 'say "hi" 100%', BAD: 'two\nlines' } });
    expect(unit).toContain('Environment="PATH=/usr/bin:/bin"\nEnvironment="Z=say \\"hi\\" 100%%"\n');
    expect(unit).not.toContain('BAD=');
  });
});

describe('unitEnvironment', () => {
  it('keeps what watch needs and nothing secret', () => {
    expect(unitEnvironment({ PATH: '/bin', DOCKER_HOST: 'unix:///x.sock', ANTHROPIC_API_KEY: 'sk-1', HOME: '/root', AGENT_KERNEL_CONFIG_DIR: '/c', AGENT_KERNEL_STATE_DIR: '/s' })).toEqual({
      PATH: '/bin',
      DOCKER_HOST: 'unix:///x.sock',
      AGENT_KERNEL_CONFIG_DIR: '/c',
      AGENT_KERNEL_STATE_DIR: '/s',
    });
  });

  it('pins the state and config folders the operator uses now, also when only XDG variables name them', () => {
    const unit = unitEnvironment({ PATH: '/bin', XDG_CONFIG_HOME: '/home/a/cfg', XDG_STATE_HOME: '/home/a/st' });
    expect(unit).toMatchObject({ AGENT_KERNEL_CONFIG_DIR: '/home/a/cfg/agent-kernel', AGENT_KERNEL_STATE_DIR: '/home/a/st/agent-kernel', XDG_STATE_HOME: '/home/a/st' });
  });
});

describe('unitEnvironment: PATH', () => {
  it('names each folder once, in the order it first came (a login profile adds ~/.local/bin again)', () => {
    const path = unitEnvironment({ PATH: '/home/a/.local/bin:/usr/local/bin:/usr/bin:/home/a/.local/bin::/usr/bin:/bin' }).PATH;
    expect(path).toBe('/home/a/.local/bin:/usr/local/bin:/usr/bin:/bin');
  });
});

describe('unitPath', () => {
  it('is under the XDG config dir, else ~/.config', () => {
    expect(unitPath('scout', { XDG_CONFIG_HOME: '/x' })).toBe('/x/systemd/user/agent-kernel-scout.service');
    expect(unitPath('scout', { HOME: '/home/a' })).toBe('/home/a/.config/systemd/user/agent-kernel-scout.service');
  });
});
