import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerodeOptions, engineCandidates, engineSetting, engineUnreachableMessage, normalizeAddress, podmanSocket } from '../../../../src/sandbox/engine/engine.js';

describe('engineCandidates', () => {
  it('tries Docker, then rootless and rootful Podman, when nothing is configured', () => {
    expect(engineCandidates(undefined, { XDG_RUNTIME_DIR: '/run/user/1000' })).toEqual([
      'unix:///var/run/docker.sock',
      'unix:///run/user/1000/podman/podman.sock',
      'unix:///run/podman/podman.sock',
    ]);
    expect(engineCandidates(undefined, {})).toEqual(['unix:///var/run/docker.sock', 'unix:///run/podman/podman.sock']);
  });

  it('uses only DOCKER_HOST when it is set', () => {
    expect(engineCandidates(undefined, { DOCKER_HOST: 'tcp://10.0.0.2:2375' })).toEqual(['tcp://10.0.0.2:2375']);
  });

  it('prefers the config engine_socket over DOCKER_HOST', () => {
    expect(engineCandidates('/run/podman/podman.sock', { DOCKER_HOST: 'tcp://x:1' })).toEqual(['unix:///run/podman/podman.sock']);
  });

  it('takes "docker" and "podman" as the local sockets of each, whatever DOCKER_HOST says', () => {
    expect(engineCandidates('docker', { DOCKER_HOST: 'tcp://x:1' })).toEqual(['unix:///var/run/docker.sock']);
    expect(engineCandidates('podman', { DOCKER_HOST: 'tcp://x:1' })).toEqual([podmanSocket({})]);
    expect(engineCandidates('ssh://ak@10.0.0.2', {})).toEqual(['ssh://ak@10.0.0.2']);
  });
});

describe('podmanSocket', () => {
  it("is root's for root, and the user's own (rootless) for anyone else", () => {
    expect(podmanSocket({ XDG_RUNTIME_DIR: '/run/user/1000' }, 0)).toBe('unix:///run/podman/podman.sock');
    expect(podmanSocket({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000)).toBe('unix:///run/user/1000/podman/podman.sock');
    expect(podmanSocket({}, 1001)).toBe('unix:///run/user/1001/podman/podman.sock');
  });
});

describe('engineSetting', () => {
  it('is container.engine, else the former engine_socket, else nothing (DOCKER_HOST or the first that answers)', () => {
    expect(engineSetting({ engine: 'podman', engine_socket: '/x.sock' })).toBe('podman');
    expect(engineSetting({ engine_socket: '/x.sock' })).toBe('/x.sock');
    expect(engineSetting({})).toBeUndefined();
  });
});

describe('dockerodeOptions', () => {
  it.each([
    ['unix:///var/run/docker.sock', { socketPath: '/var/run/docker.sock', host: undefined }],
    ['/run/podman/podman.sock', { socketPath: '/run/podman/podman.sock' }],
    ['tcp://10.0.0.2:2375', { protocol: 'http', host: '10.0.0.2', port: '2375', socketPath: undefined }],
    ['ssh://me@build-box', { protocol: 'ssh', host: 'build-box', username: 'me', port: 22 }],
    ['ssh://me@build-box:2222', { protocol: 'ssh', port: '2222' }],
  ])('%s', (address, expected) => {
    expect(dockerodeOptions(address, {})).toMatchObject(expected);
  });

  it('reaches an engine with TLS with the client certificates of DOCKER_CERT_PATH, and says which file is missing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ak-certs-'));
    try {
      expect(() => dockerodeOptions('tcp://engine:2376', { DOCKER_CERT_PATH: dir })).toThrow(/ca\.pem cannot be read.*DOCKER_CERT_PATH/s);
      for (const name of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(path.join(dir, name), `${name} bytes`);
      const options = dockerodeOptions('tcp://engine:2376', { DOCKER_CERT_PATH: dir }) as Record<string, unknown>;
      expect(options).toMatchObject({ protocol: 'https', host: 'engine', port: '2376' });
      expect(String(options.key)).toBe('key.pem bytes');
      expect(String(options.ca)).toBe('ca.pem bytes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown scheme with a hint', () => {
    expect(() => dockerodeOptions('ftp://x', {})).toThrow(/unix:\/\/, tcp:\/\/ or ssh:\/\//);
  });

  it('normalizes bare paths and host:port', () => {
    expect(normalizeAddress('/x.sock')).toBe('unix:///x.sock');
    expect(normalizeAddress('host:2375')).toBe('tcp://host:2375');
  });
});

describe('engineUnreachableMessage', () => {
  it('names every address tried and every way to start an engine', () => {
    const text = engineUnreachableMessage([
      { address: 'unix:///var/run/docker.sock', error: 'connect ENOENT /var/run/docker.sock' },
      { address: 'unix:///run/podman/podman.sock', error: 'connect ENOENT' },
    ]);
    for (const part of ['unix:///var/run/docker.sock', 'unix:///run/podman/podman.sock', 'sudo dockerd &', 'systemctl start docker', 'podman system service --time=0', 'npm run setup']) {
      expect(text).toContain(part);
    }
  });
});
