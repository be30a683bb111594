import { describe, expect, it } from 'vitest';
import { splitAgentFields } from '../../../../src/config/operator-config.js';
import { boundaryCreateOptions, boundaryOfInfo, instanceBoundary, rootMappingOf } from '../../../../src/sandbox/container/user-namespace.js';

describe('is container root host root? (doctor: user namespace)', () => {
  it.each([
    [['name=seccomp,profile=default'], 'host-root'],
    [['name=apparmor', 'name=seccomp,profile=default', 'name=userns'], 'remapped'],
    [['name=seccomp,profile=default', 'name=rootless', 'name=cgroupns'], 'rootless'],
    [[], 'host-root'],
  ] as const)('%j → %s', (options, mapping) => {
    expect(rootMappingOf(options)).toBe(mapping);
  });
});

describe('the second boundary (doctor: boundary)', () => {
  it('reads it from the engine: userns-remap with its host ids, rootless, gVisor as the default runtime, none', () => {
    expect(boundaryOfInfo({ SecurityOptions: ['name=seccomp,profile=default', 'name=userns'], DockerRootDir: '/var/lib/docker/100000.100000', Runtimes: { runc: {}, runsc: {} } })).toEqual({
      kind: 'userns-remap',
      hostIds: { uid: 100000, gid: 100000, size: 65536 },
      runtimes: ['runc', 'runsc'],
    });
    expect(boundaryOfInfo({ SecurityOptions: ['name=rootless'] }).kind).toBe('rootless');
    expect(boundaryOfInfo({ SecurityOptions: [], DefaultRuntime: 'runsc', Runtimes: { runsc: {} } }).kind).toBe('gvisor');
    expect(boundaryOfInfo({ SecurityOptions: null, Runtimes: null })).toEqual({ kind: 'none', runtimes: [] });
  });

  const remap = boundaryOfInfo({ SecurityOptions: ['name=userns'], DockerRootDir: '/d/100000.100000', Runtimes: { runc: {} } });
  const rootful = boundaryOfInfo({ SecurityOptions: [], Runtimes: { runc: {}, runsc: {} } });

  it('container.boundary picks per instance, and only the operator can turn the remapping off', () => {
    expect(instanceBoundary({ boundary: 'engine' }, remap)).toBe('userns-remap');
    expect(boundaryCreateOptions({ boundary: 'engine' }, remap, 'op.json')).toEqual({});
    expect(boundaryCreateOptions({ boundary: 'none' }, remap, 'op.json')).toEqual({ UsernsMode: 'host' });
    expect(boundaryCreateOptions({ boundary: 'none' }, rootful, 'op.json')).toEqual({});
    expect(boundaryCreateOptions({ boundary: 'gvisor' }, rootful, 'op.json')).toEqual({ Runtime: 'runsc' });
    expect(instanceBoundary({ boundary: 'gvisor' }, rootful)).toBe('gvisor');
  });

  it('refuses gvisor on an engine without runsc, naming the fix', () => {
    expect(() => boundaryCreateOptions({ boundary: 'gvisor' }, remap, 'op.json')).toThrow(/op\.json: container\.boundary is "gvisor" but the engine has no runsc runtime \(it has runc\).*--add-runtime runsc/);
  });

  it('is for the operator alone: the agent cannot set it', () => {
    expect(splitAgentFields({ container: { boundary: 'none' } }).rest).toEqual({ container: { boundary: 'none' } });
  });
});
