import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isCodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import {
  containerDown,
  containerName,
  containerRebuild,
  containerStatus,
  containerUp,
  prune,
} from '../../../src/sandbox/container/container.js';
import { type Engine, connectEngine } from '../../../src/sandbox/engine/engine.js';
import { LABEL, imageExists } from '../../../src/sandbox/engine/image.js';
import { ensureImage } from '../../../src/sandbox/container/instance-image.js';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { removeInstanceResources } from '../../../src/sandbox/container/remove-instance.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance, withTestBases } from '../../helpers/test-instance.js';

const options = { logger: silentLogger() };

describeWithEngine('container lifecycle (real engine)', () => {
  let test: TestInstance;
  let engine: Engine;
  const foreignTags: string[] = [];

  beforeAll(async () => {
    engine = await connectEngine();
    test = await createTestInstance();
  });
  afterAll(async () => {
    for (const tag of foreignTags) await engine.docker.getImage(tag).remove().catch(() => undefined);
    await test?.cleanup();
  });

  function sandbox(): DockerSandbox {
    return new DockerSandbox({ engine, containerName: containerName(test.name), cwd: test.dataDir });
  }

  it('up creates and starts a labelled container named after the instance', async () => {
    expect((await containerStatus(engine, test.instance)).exists).toBe(false);
    const progress: string[] = [];
    const status = await containerUp(engine, test.instance, { ...options, onProgress: (line) => progress.push(line) });
    expect(status).toMatchObject({ name: `agent-kernel-${test.name}`, exists: true, running: true, stale: false });
    expect(progress.some((line) => line.startsWith('building '))).toBe(true);
    const info = await engine.docker.getContainer(status.name).inspect();
    expect(info.Config.Labels).toMatchObject({
      [LABEL.instance]: test.name,
      [LABEL.imageHash]: status.currentImageHash,
      [LABEL.dataDir]: test.dataDir,
    });
  });

  it('up again changes nothing', async () => {
    const before = await containerStatus(engine, test.instance);
    const after = await containerUp(engine, test.instance, options);
    expect(after.id).toBe(before.id);
    expect(after.startedAt).toBe(before.startedAt);
  });

  it('a stopped container is started again, the same one, and files in the data dir survive', async () => {
    const before = await containerStatus(engine, test.instance);
    expect((await sandbox().run(['sh', '-c', 'echo kept > note.txt'])).exitCode).toBe(0);
    await engine.docker.getContainer(before.name).stop({ t: 1 });
    expect((await containerStatus(engine, test.instance)).running).toBe(false);
    const after = await containerUp(engine, test.instance, options);
    expect(after).toMatchObject({ id: before.id, running: true });
    expect((await sandbox().run(['cat', 'note.txt'])).stdout).toBe('kept\n');
    expect(await readFile(path.join(test.dataDir, 'note.txt'), 'utf8')).toBe('kept\n');
  });

  it('survives an engine-side restart', async () => {
    const before = await containerStatus(engine, test.instance);
    await engine.docker.getContainer(before.name).restart({ t: 1 });
    const after = await containerUp(engine, test.instance, options);
    expect(after).toMatchObject({ id: before.id, running: true, stale: false });
  });

  async function ourImages(): Promise<string[]> {
    const images = await engine.docker.listImages({ filters: { label: [`${LABEL.instance}=${test.name}`] } });
    return images.map((i) => i.Id);
  }

  it('a Containerfile change makes the container stale; up rebuilds, recreates it and removes the old image', async () => {
    const before = await containerStatus(engine, test.instance);
    await appendFile(test.instance.paths.containerfile, '\nRUN echo v2 > /etc/agent-kernel-test-version\n');
    const stale = await containerStatus(engine, test.instance);
    expect(stale).toMatchObject({ running: true, stale: true });
    const after = await containerUp(engine, test.instance, options);
    expect(after.id).not.toBe(before.id);
    expect(after.image).not.toBe(before.image);
    expect(after.stale).toBe(false);
    expect((await sandbox().run(['cat', '/etc/agent-kernel-test-version'])).stdout).toBe('v2\n');
    expect(await imageExists(engine, before.image ?? '?')).toBe(false);
    expect(await ourImages()).toHaveLength(1);
  });

  it('prune removes images of this instance that nothing uses, and keeps the current one and anything without our labels', async () => {
    const status = await containerStatus(engine, test.instance);
    const current = await readFile(test.instance.paths.containerfile, 'utf8');
    await writeFile(test.instance.paths.containerfile, current + 'RUN echo v3 > /etc/agent-kernel-test-version\n');
    const unused = await ensureImage(engine, test.instance, options);
    await writeFile(test.instance.paths.containerfile, current);
    // An image in our repository but without our labels: not ours, must survive.
    const foreign = `agent-kernel/${test.name}:foreign`;
    await engine.docker.getImage('debian:bookworm-slim').tag({ repo: `agent-kernel/${test.name}`, tag: 'foreign' });
    foreignTags.push(foreign);

    const result = await prune(engine, test.instance, options);
    expect(result.removedImages).toEqual([unused.tag]);
    expect(result.removedContainers).toEqual([]);
    expect(await imageExists(engine, status.image ?? '?')).toBe(true);
    expect(await imageExists(engine, foreign)).toBe(true);
    expect((await containerStatus(engine, test.instance))).toMatchObject({ running: true, id: status.id, stale: false });
  });

  it('rebuild makes a fresh image without the cache and a new container, and drops the old image', async () => {
    const before = await containerStatus(engine, test.instance);
    const [oldImage] = await ourImages();
    const after = await containerRebuild(engine, test.instance, options);
    expect(after.id).not.toBe(before.id);
    expect(after.running).toBe(true);
    const images = await ourImages();
    expect(images).toHaveLength(1);
    expect(images[0]).not.toBe(oldImage);
  }, 300_000); // without the cache, apt-get runs again

  it('processes that bring the same instance up at once (a watch, its kernel, a tick) all get the one container, trial after trial', async () => {
    // The engine reserves the name before the container exists: a create that loses the race
    // sees "name in use" while nothing answers to the name yet (CI: post-office flood, 409).
    for (let trial = 0; trial < 6; trial++) {
      await containerDown(engine, test.instance, options);
      const ups = await Promise.allSettled(Array.from({ length: 5 }, () => containerUp(engine, test.instance, options)));
      const failed = ups.filter((u) => u.status === 'rejected').map((u) => String((u as PromiseRejectedResult).reason));
      expect(failed, `trial ${trial}`).toEqual([]);
      const ids = new Set(ups.map((u) => (u as PromiseFulfilledResult<{ id?: string }>).value.id));
      expect(ids.size, `trial ${trial}`).toBe(1);
      expect((await containerStatus(engine, test.instance)).running).toBe(true);
    }
  }, 300_000);

  it('down removes the container and keeps the data', async () => {
    const status = await containerDown(engine, test.instance, options);
    expect(status.exists).toBe(false);
    expect(await readFile(path.join(test.dataDir, 'note.txt'), 'utf8')).toBe('kept\n');
    expect((await containerDown(engine, test.instance, options)).exists).toBe(false);
  });

  it('never touches a container that has our name but not our labels', async () => {
    const name = containerName(test.name);
    const stranger = await engine.docker.createContainer({ name, Image: 'debian:bookworm-slim', Cmd: ['true'] });
    try {
      for (const action of [() => containerUp(engine, test.instance, options), () => containerDown(engine, test.instance, options)]) {
        const error = await action().catch((e: unknown) => e);
        expect(isCodedError(error, 'CONTAINER_FAILED')).toBe(true);
        expect((error as Error).message).toMatch(/did not create it/);
      }
      expect((await stranger.inspect()).Id).toBe(stranger.id);
    } finally {
      await stranger.remove({ force: true });
    }
  });

  it('a config change (network none) recreates the container with container up, never at a server or tick start', async () => {
    const first = await containerUp(engine, test.instance, options);
    await writeFile(test.instance.paths.operatorConfig, JSON.stringify(withTestBases({ container: { network: 'none' } })));
    const changed = await test.reload();
    expect((await containerStatus(engine, changed)).stale).toBe(false); // status alone does not know the config
    // A server or a tick that starts with this configuration keeps the running container and its terminals.
    expect((await containerUp(engine, changed, options)).id).toBe(first.id);
    const second = await containerUp(engine, changed, { ...options, recreateForConfig: true });
    expect(second.id).not.toBe(first.id);
    const info = await engine.docker.getContainer(second.name).inspect();
    expect(info.HostConfig.NetworkMode).toBe('none');
  });

  it('rm removes the container and every image of the instance, keeps the data, and never a container without our label', async () => {
    await containerUp(engine, test.instance, options);
    const removed = await removeInstanceResources(engine, test.name);
    expect(removed.containers).toContain(containerName(test.name));
    expect(removed.images.length).toBeGreaterThan(0);
    const filters = { label: [`${LABEL.instance}=${test.name}`] };
    expect(await engine.docker.listContainers({ all: true, filters })).toEqual([]);
    expect(await engine.docker.listImages({ filters })).toEqual([]);
    expect(await readFile(path.join(test.dataDir, 'note.txt'), 'utf8')).toBe('kept\n');

    const stranger = await engine.docker.createContainer({ name: containerName(test.name), Image: 'debian:bookworm-slim', Cmd: ['true'] });
    try {
      const again = await removeInstanceResources(engine, test.name);
      expect(again).toMatchObject({ containers: [], images: [] });
      expect(again.kept[0]).toMatch(/not created by agent-kernel/);
      expect((await stranger.inspect()).Id).toBe(stranger.id);
    } finally {
      await stranger.remove({ force: true });
    }
  }, 300_000);
});
