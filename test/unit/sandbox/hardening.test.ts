import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPABILITIES, parseAgentConfig } from '../../../src/config/agent-config.js';
import { isKernelError } from '../../../src/errors.js';
import { type HostFacts, hardenedCreateOptions, parseMemory } from '../../../src/sandbox/hardening.js';
import { proxyEnv } from '../../../src/sandbox/egress-squid.js';

const DATA = '/srv/agents/scout';

/** A host where /srv/agents/scout exists, with a symlink escaping it and a socket inside it. */
const host: HostFacts = {
  realpath(p) {
    const table: Record<string, string> = {
      '/srv/agents/scout/link-to-etc': '/etc',
      '/srv/agents/scout/link-inside': '/srv/agents/scout/shared',
      '/srv/agents/scout/run/engine': '/srv/agents/scout/run/engine',
      '/var/run/docker.sock': '/run/docker.sock',
      '/etc': '/etc',
      '/home/me': '/home/me',
    };
    if (p in table) return table[p];
    if (p.startsWith(DATA) && !p.includes('missing')) return p;
    return undefined;
  },
  isSocket: (p) => p === '/run/docker.sock' || p === '/srv/agents/scout/run/engine',
};

function options(container: Record<string, unknown> = {}, dataDir = DATA) {
  return hardenedCreateOptions({ config: parseAgentConfig({ container }).container, dataDir, host });
}

function refusal(container: Record<string, unknown>): string {
  try {
    options(container);
  } catch (error) {
    expect(isKernelError(error, 'CONFIG_REFUSED')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected CONFIG_REFUSED');
}

describe('hardenedCreateOptions: the defaults', () => {
  const { HostConfig, WorkingDir, Env } = options();

  it.each([
    ['drops every capability', { CapDrop: ['ALL'] }],
    ['adds back only the documented minimal set', { CapAdd: [...DEFAULT_CAPABILITIES] }],
    ['forbids gaining privileges', { SecurityOpt: ['no-new-privileges'], Privileged: false }],
    ['limits processes, memory (no extra swap) and CPU', { PidsLimit: 1024, Memory: 2 * 1024 ** 3, MemorySwap: 2 * 1024 ** 3, NanoCpus: 2e9 }],
    ['runs an init that reaps zombies', { Init: true }],
    ['gives the container loopback only (allowlist: the egress link joins it)', { NetworkMode: 'none' }],
    ['keeps the root file system writable', { ReadonlyRootfs: false }],
  ])('%s', (_, expected) => {
    expect(HostConfig).toMatchObject(expected);
  });

  it('adds no tmpfs while the root file system is writable', () => {
    expect(HostConfig?.Tmpfs).toBeUndefined();
  });

  it('mounts the data directory, and nothing else, at the same absolute path', () => {
    expect(HostConfig?.Mounts).toEqual([{ Type: 'bind', Source: DATA, Target: DATA, ReadOnly: false }]);
    expect(HostConfig?.Binds).toBeUndefined();
    expect(WorkingDir).toBe(DATA);
    expect(Env).toEqual(Object.entries(proxyEnv()).map(([k, v]) => `${k}=${v}`));
  });

  it('sets nofile and nproc explicitly (Podman fails to start without them)', () => {
    const names = HostConfig?.Ulimits?.map((u) => u.Name).sort();
    expect(names).toEqual(['nofile', 'nproc']);
    for (const limit of HostConfig?.Ulimits ?? []) expect(limit.Soft).toBe(limit.Hard);
  });
});

describe('hardenedCreateOptions: what the config can change', () => {
  it.each([
    [{ network: 'none' }, { NetworkMode: 'none' }],
    [{ network: 'open' }, { NetworkMode: 'bridge' }],
    [{ network: 'bridge' }, { NetworkMode: 'bridge' }],
    [{ memory: '512m', cpus: 0.5, pids_limit: 256 }, { Memory: 512 * 1024 ** 2, NanoCpus: 5e8, PidsLimit: 256 }],
    [{ cap_add: ['CHOWN', 'NET_BIND_SERVICE', 'CHOWN'] }, { CapAdd: ['CHOWN', 'NET_BIND_SERVICE'], CapDrop: ['ALL'] }],
    [{ cap_add: [] }, { CapAdd: [] }],
    [{ read_only_root: true }, { ReadonlyRootfs: true, Tmpfs: { '/tmp': expect.any(String), '/run': expect.any(String) } }],
  ])('%j', (container, expected) => {
    expect(options(container).HostConfig).toMatchObject(expected);
  });

  it('passes env to the container', () => {
    expect(options({ network: 'open', env: { EDITOR: 'vi', A_B: 'x=y' } }).Env).toEqual(['EDITOR=vi', 'A_B=x=y']);
    expect(options({ network: 'none' }).Env).toEqual([]);
    // The operator's env wins over the proxy variables.
    expect(options({ env: { NO_PROXY: '*' } }).Env).toContain('NO_PROXY=*');
  });

  it('adds mounts inside the data directory, resolving relative paths and symlinks', () => {
    const mounts = options({
      mounts: [
        { source: 'cache', target: '/root/.cache' },
        { source: `${DATA}/link-inside`, target: '/mnt/shared', read_only: true },
      ],
    }).HostConfig?.Mounts;
    expect(mounts?.slice(1)).toEqual([
      { Type: 'bind', Source: `${DATA}/cache`, Target: '/root/.cache', ReadOnly: false },
      { Type: 'bind', Source: `${DATA}/shared`, Target: '/mnt/shared', ReadOnly: true },
    ]);
  });
});

describe('hardenedCreateOptions: refused configs', () => {
  it.each([
    ['privileged', { privileged: true }, /privileged/],
    ['the docker socket by path', { mounts: [{ source: '/var/run/docker.sock', target: '/var/run/docker.sock' }] }, /engine socket/],
    ['the podman socket by path', { mounts: [{ source: '/run/podman/podman.sock', target: '/x' }] }, /engine socket/],
    ['a path that resolves to a socket', { mounts: [{ source: 'run/engine', target: '/x' }] }, /socket/],
    ['a host path outside the data directory', { mounts: [{ source: '/home/me', target: '/home/me' }] }, /outside the data directory/],
    ['a .. escape', { mounts: [{ source: '../../../etc', target: '/mnt/etc' }] }, /outside the data directory/],
    ['a symlink escape', { mounts: [{ source: 'link-to-etc', target: '/mnt/etc' }] }, /resolves to \/etc, outside/],
    ['a missing source', { mounts: [{ source: 'missing', target: '/mnt/m' }] }, /does not exist/],
    ['a mount over /', { mounts: [{ source: 'root', target: '/' }] }, /root file system/],
    ['a mount over a parent of the data dir', { mounts: [{ source: 'x', target: '/srv' }] }, /data directory/],
    ['a mount over the data dir itself', { mounts: [{ source: 'x', target: DATA }] }, /data directory/],
    ['a mount into /proc', { mounts: [{ source: 'x', target: '/proc/sys' }] }, /\/proc/],
    ['the same target twice', { mounts: [{ source: 'a', target: '/mnt/a' }, { source: 'b', target: '/mnt/a/' }] }, /twice/],
  ])('%s', (_, container, message) => {
    const text = refusal(container);
    expect(text).toMatch(message);
    expect(text.startsWith(`${DATA}/system/agent_config.json: container.`)).toBe(true);
  });

  it('refuses a data directory that resolves to /', () => {
    const rootHost: HostFacts = { realpath: () => '/', isSocket: () => false };
    expect(() => hardenedCreateOptions({ config: parseAgentConfig({}).container, dataDir: '/data', host: rootHost })).toThrow(/resolves to \//);
  });
});

describe('parseMemory', () => {
  it.each([
    ['64m', 64 * 1024 ** 2],
    ['2g', 2 * 1024 ** 3],
    ['1G', 1024 ** 3],
    ['65536k', 64 * 1024 ** 2],
  ])('%s', (text, bytes) => expect(parseMemory(text)).toBe(bytes));

  it('refuses sizes too small to run a shell', () => {
    expect(() => parseMemory('1m')).toThrow(/too small/);
  });
});
