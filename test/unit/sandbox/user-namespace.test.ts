import { describe, expect, it } from 'vitest';
import { rootMappingOf } from '../../../src/sandbox/user-namespace.js';

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
