/**
 * Known ways an engine fails on a machine like this one (Podman 4.3 from Debian above all), each
 * with its fix: for doctor's engine check, and for the error when a container does not start.
 */

interface Trap {
  /** What the engine's error says. */
  symptom: RegExp;
  fix: string;
}

const TRAPS: readonly Trap[] = [
  {
    symptom: /cgroups? in hybrid mode|crun: .*cgroup/i,
    fix: 'Podman\'s crun runtime does not run on this host\'s cgroups: start the service with runc (podman --runtime runc system service ...; apt-get install runc)',
  },
  { symptom: /catatonit/i, fix: 'Podman needs catatonit for the container\'s init: apt-get install catatonit' },
  {
    symptom: /setting rlimit|rlimit type/i,
    fix: 'the engine\'s default ulimits exceed this host\'s hard limits: give the container explicit nofile and nproc limits (agent-kernel\'s own containers have them)',
  },
  {
    symptom: /subuid|subgid|no subordinate|not enough (?:unused )?ids|newuidmap/i,
    fix: 'give the engine\'s user subordinate ids: usermod --add-subuids 100000-165535 --add-subgids 100000-165535 USER (for rootful Podman\'s --userns=auto: the user "containers"), and apt-get install uidmap',
  },
  {
    symptom: /\/dev\/net\/tun.*(?:permission denied|not permitted)|slirp4netns failed/i,
    fix: 'rootless Podman\'s network cannot open /dev/net/tun: as root, chmod 0666 /dev/net/tun (its usual mode; scripts/ensure-engine.sh does it with AGENT_KERNEL_ENGINE=podman)',
  },
  {
    symptom: /cgroup-manager|systemd.*(?:not running|no such file)|dbus/i,
    fix: 'without systemd, Podman needs --cgroup-manager cgroupfs (podman --cgroup-manager cgroupfs system service ...)',
  },
];

/** Pure: the fix for an engine error we know, or undefined. */
export function knownTrapFix(message: string): string | undefined {
  return TRAPS.find((trap) => trap.symptom.test(message))?.fix;
}

interface EngineInfo {
  DefaultRuntime?: string;
  CgroupVersion?: string;
}

/** Pure: doctor's row on a Podman engine from its `info`: which runtime, rootless or not, and the trap it would fall into. */
export function podmanCheck(info: EngineInfo, rootless: boolean): { status: 'ok' | 'failed'; detail: string; fix?: string } {
  const runtime = info.DefaultRuntime ?? 'unknown';
  const detail = `${rootless ? 'rootless' : 'rootful'}, runtime ${runtime}, cgroups v${info.CgroupVersion ?? '?'}`;
  if (runtime === 'crun' && info.CgroupVersion === '1') {
    return { status: 'failed', detail: `${detail}: crun cannot start containers here`, fix: knownTrapFix('cgroups in hybrid mode') };
  }
  return { status: 'ok', detail };
}
