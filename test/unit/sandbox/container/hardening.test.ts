import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPABILITIES, parseAgentConfig } from '../../../../src/config/agent-config.js';
import { isCodedError } from '../../../../src/errors.js';
import { type HostFacts, hardenedCreateOptions, parseMemory } from '../../../../src/sandbox/container/hardening.js';
import { proxyEnv } from '../../../../src/sandbox/egress/squid.js';

const DATA = '/srv/agents/scout';

const CONFIG_FILE = '/home/op/.config/agent-kernel/instances/scout.json';

/** A host where /srv/agents/scout exists. */
const host: HostFacts = {
  realpath: (p) => (p.startsWith(DATA) ? p : undefined),
};

function options(container: Record<string, unknown> = {}, dataDir = DATA) {
  return hardenedCreateOptions({ config: parseAgentConfig({ container }).container, dataDir, host, configFile: CONFIG_FILE });
}

function refusal(container: Record<string, unknown>): string {
  try {
    options(container);
  } catch (error) {
    expect(isCodedError(error, 'CONFIG_REFUSED')).toBe(true);
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
});

describe('hardenedCreateOptions: refused configs', () => {
  it.each([
    ['privileged', { privileged: true }, /privileged/],
    // The engine re-resolves a mount's source at every start: whatever the source, a link swapped in later wins.
    ['the docker socket', { mounts: [{ source: '/var/run/docker.sock', target: '/var/run/docker.sock' }] }, /extra mounts are refused/],
    ['a host path', { mounts: [{ source: '/home/me', target: '/home/me' }] }, /extra mounts are refused/],
    ['a folder inside the data directory', { mounts: [{ source: 'cache', target: '/root/.cache', read_only: true }] }, /link other paths to it from inside the container/],
  ])('%s', (_, container, message) => {
    const text = refusal(container);
    expect(text).toMatch(message);
    expect(text.startsWith(`${CONFIG_FILE}: container.`)).toBe(true);
  });

  it('refuses a data directory that resolves to /', () => {
    const rootHost: HostFacts = { realpath: () => '/' };
    expect(() => hardenedCreateOptions({ config: parseAgentConfig({}).container, dataDir: '/data', host: rootHost, configFile: CONFIG_FILE })).toThrow(/resolves to \//);
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
