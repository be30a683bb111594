import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Engine, connectEngine, describeEngine, dockerodeOptions } from '../../../src/sandbox/engine/engine.js';
import { EngineAgentFiles } from '../../../src/sandbox/files/engine-files.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type RemoteEngine, startRemoteEngine } from '../../helpers/remote-engine.js';
import { TEST_IMAGE } from '../../helpers/test-instance.js';

const DATA = '/srv/agent-data';

/**
 * The agent's files on an engine that is not this machine's socket: a second dockerd reached
 * over TCP with mutual TLS from a network namespace of its own (test/helpers/remote-engine.ts), its data directory a volume
 * there. What the host writes arrives in the volume, what the agent writes comes back, and a
 * client without the certificates is turned away.
 */
describeWithEngine('a remote engine (TCP with TLS): the agent\'s files on its volume', () => {
  let remote: RemoteEngine;
  let engine: Engine;
  const volume = 'agent-kernel-remote-files';
  const container = 'agent-kernel-remote-files';

  beforeAll(async () => {
    remote = await startRemoteEngine();
    await remote.loadImage(await connectEngine(), TEST_IMAGE);
    engine = await connectEngine({ socket: remote.address, env: remote.env });
    await engine.docker.createVolume({ Name: volume });
    const created = await engine.docker.createContainer({
      name: container,
      Image: TEST_IMAGE,
      Cmd: ['sleep', 'infinity'],
      HostConfig: { NetworkMode: 'none', CapDrop: ['ALL'], Init: true, Mounts: [{ Type: 'volume', Source: volume, Target: DATA }] },
    });
    await created.start();
  }, 240_000);

  afterAll(async () => {
    await remote?.stop();
  }, 120_000);

  it('is reached with TLS only', async () => {
    expect(describeEngine(engine)).toMatch(/^docker .* at tcp:\/\/169\.254\.\d+\.\d+:2376$/);
    // Without the client certificate the engine does not answer.
    const port = Number(new URL(remote.address).port);
    const withoutCertificate = new Dockerode({ protocol: 'https', host: new URL(remote.address).hostname, port, ca: await readFile(path.join(remote.certDir, 'ca.pem')) });
    await expect(withoutCertificate.ping()).rejects.toThrow(/certificate|socket hang up|ECONNRESET|alert/i);
    const plain = new Dockerode({ protocol: 'http', host: new URL(remote.address).hostname, port });
    await expect(plain.ping()).rejects.toThrow();
    // And the kernel says what it lacks, in our words.
    expect(() => dockerodeOptions(remote.address, { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/nonexistent' })).toThrow(/\/nonexistent\/ca\.pem cannot be read/);
  });

  it('writes into the volume, reads the agent\'s files back, and refuses its links', async () => {
    const files = new EngineAgentFiles({ engine, container, dataDir: DATA, volume });
    expect(files.where).toBe(`volume ${volume} on ${remote.address}`);
    expect(await files.writeNew('inbox/from-host.txt', 'over TLS')).toBe(true);
    const exec = await engine.docker.getContainer(container).exec({ Cmd: ['sh', '-c', `cat ${DATA}/inbox/from-host.txt > ${DATA}/inbox/echo.txt && ln -s /etc/shadow ${DATA}/inbox/link`], User: '0' });
    await exec.start({});
    const echoed = await (async () => {
      for (let i = 0; i < 200; i++) {
        const data = await files.read('inbox/echo.txt', { maxBytes: 100 });
        if (data && data.length > 0) return Buffer.from(data).toString();
        await new Promise((r) => setTimeout(r, 100));
      }
      return undefined;
    })();
    expect(echoed).toBe('over TLS');
    await expect(files.read('inbox/link', { maxBytes: 10_000 })).rejects.toThrow(/not a regular file/);
    expect((await files.list('inbox'))?.map((e) => `${e.kind}:${e.name}`)).toEqual(['file:echo.txt', 'file:from-host.txt', 'link:link']);
  });
});
