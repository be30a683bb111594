import { describe, expect, it } from 'vitest';
import { knownTrapFix, podmanCheck } from '../../../../src/sandbox/engine/engine-traps.js';

describe('knownTrapFix', () => {
  it.each([
    ['crun: cgroups in hybrid mode are not supported: OCI runtime error', /--runtime runc/],
    ['error: could not find catatonit in any of [/usr/libexec/podman/catatonit]', /apt-get install catatonit/],
    ['error setting rlimits for ready process: error setting rlimit type 7: operation not permitted', /explicit nofile and nproc/],
    ['/usr/bin/slirp4netns failed: "open(\\"/dev/net/tun\\"): Permission denied', /chmod 0666 \/dev\/net\/tun/],
    ['cannot find mappings for user containers: no subuid ranges found for user "containers" in /etc/subuid', /--add-subuids/],
  ])('names the fix for %s', (message, fix) => {
    expect(knownTrapFix(message)).toMatch(fix);
  });

  it('says nothing for an error it does not know', () => {
    expect(knownTrapFix('no space left on device')).toBeUndefined();
  });
});

describe('podmanCheck', () => {
  it('fails crun on cgroups v1 with the fix, and says rootless or rootful', () => {
    expect(podmanCheck({ DefaultRuntime: 'crun', CgroupVersion: '1' }, false)).toMatchObject({ status: 'failed', fix: expect.stringMatching(/runc/) });
    expect(podmanCheck({ DefaultRuntime: 'runc', CgroupVersion: '1' }, false)).toEqual({ status: 'ok', detail: 'rootful, runtime runc, cgroups v1' });
    expect(podmanCheck({ DefaultRuntime: 'crun', CgroupVersion: '2' }, true).detail).toBe('rootless, runtime crun, cgroups v2');
  });
});
