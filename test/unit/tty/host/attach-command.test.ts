import { describe, expect, it } from 'vitest';
import { attachArgv, dockerHostFor, listWindowsArgv } from '../../../../src/tty/host/attach-command.js';

describe('attachArgv', () => {
  it('attaches read-only through docker exec -it on the kernel socket', () => {
    expect(attachArgv({ backend: 'docker', instanceName: 'foo' }, 3, false)).toEqual([
      'docker', 'exec', '-it', '-e', 'TERM=xterm-256color', 'agent-kernel-foo', 'tmux', '-L', 'agent-kernel', 'attach', '-r', '-t', 'kernel:3',
    ]);
  });
  it('drops -r with --write, runs as the configured user, and uses the per-instance socket on the host', () => {
    expect(attachArgv({ backend: 'docker', instanceName: 'foo', user: 'agent' }, 0, true)).toContain('-u');
    expect(attachArgv({ backend: 'docker', instanceName: 'foo' }, 0, true)).not.toContain('-r');
    expect(attachArgv({ backend: 'host', instanceName: 'foo' }, 2, false)).toEqual(['env', '-u', 'TMUX', 'tmux', '-L', 'agent-kernel-foo', 'attach', '-r', '-t', 'kernel:2']);
  });
  it('lists windows without a terminal', () => {
    expect(listWindowsArgv({ backend: 'docker', instanceName: 'foo' })).not.toContain('-it');
  });
  it('turns container.engine into DOCKER_HOST', () => {
    expect(dockerHostFor('/run/podman/podman.sock')).toBe('unix:///run/podman/podman.sock');
    expect(dockerHostFor('tcp://10.0.0.2:2375')).toBe('tcp://10.0.0.2:2375');
    expect(dockerHostFor(undefined)).toBeUndefined();
    expect(dockerHostFor('docker')).toBe('unix:///var/run/docker.sock');
    expect(dockerHostFor('10.0.0.2:2375')).toBe('tcp://10.0.0.2:2375');
  });
});
