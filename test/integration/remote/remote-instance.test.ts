import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { type Engine, connectEngine, dataVolumeName } from '../../../src/sandbox/engine/engine.js';
import { EngineAgentFiles } from '../../../src/sandbox/files/engine-files.js';
import { agentFilesFor } from '../../../src/sandbox/container/agent-files-for.js';
import { PostOffice } from '../../../src/mail/post-office.js';
import { silentLogger } from '../../../src/log/logger.js';
import { takeSnapshot } from '../../../src/snapshot/take.js';
import { removeInstance } from '../../../src/runner/instances/instance-removal.js';
import { removeInstanceResources } from '../../../src/sandbox/container/remove-instance.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type RemoteEngine, startRemoteEngine } from '../../helpers/remote-engine.js';
import { TEST_IMAGE, type TestInstance, createTestInstance } from '../../helpers/test-instance.js';
import { type StdioSession, connectStdio, ensureBuilt, waitFor } from '../server/helpers.js';

/**
 * An instance whose `container.engine` is a remote engine (a second dockerd in its own network
 * namespace, reached over TCP with mutual TLS: test/helpers/remote-engine.ts). An MCP client
 * (the SDK's, over stdio) logs in, opens a terminal, types and waits; the container runs on the
 * remote engine only, and what the agent writes in its data directory lands in the volume there,
 * not in the host's folder.
 */
describeWithEngine('an instance on a remote engine (TCP with TLS)', () => {
  let remote: RemoteEngine;
  let engine: Engine;
  let test: TestInstance;
  let session: StdioSession | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    remote = await startRemoteEngine();
    await remote.loadImage(await connectEngine(), TEST_IMAGE);
    engine = await connectEngine({ socket: remote.address, env: remote.env });
    test = await createTestInstance({ config: { container: { network: 'none', engine: remote.address } } });
  }, 300_000);

  afterAll(async () => {
    await session?.close().catch(() => undefined);
    await test?.cleanup();
    await remote?.stop();
  }, 180_000);

  it('runs its terminals there, through the MCP tools', async () => {
    session = await connectStdio(test.dataDir, { DOCKER_CERT_PATH: remote.certDir });
    await session.ok('login');
    const opened = await session.ok('open');
    expect(opened.structuredContent).toMatchObject({ tty: 1, command: 'bash' });
    await session.call('wait', { timeout: 5 });
    await session.ok('type', { tty: 1, expect: 'bash', text: 'echo "remote $((6*7))" | tee remote-proof.txt; hostname' });
    await waitFor(session.call, /^remote 42$/m, 60);

    // The container is on the remote engine, with the data directory as its volume there.
    const info = await engine.docker.getContainer(containerName(test.name)).inspect();
    expect(info.State.Running).toBe(true);
    expect(info.Mounts).toEqual([expect.objectContaining({ Type: 'volume', Name: dataVolumeName(test.name), Destination: test.dataDir })]);
    const local = await connectEngine();
    await expect(local.docker.getContainer(containerName(test.name)).inspect()).rejects.toThrow(/no such container/i);

    // What the agent wrote is in the volume, read through the engine, and not in the host's folder.
    const files = new EngineAgentFiles({ engine, container: containerName(test.name), dataDir: test.dataDir, volume: dataVolumeName(test.name) });
    expect(Buffer.from((await files.read('remote-proof.txt', { maxBytes: 100 })) ?? []).toString()).toBe('remote 42\n');
    expect(existsSync(path.join(test.dataDir, 'remote-proof.txt'))).toBe(false);
  }, 300_000);

  it('delivers what the agent put in its outbox there, and refuses a link it planted', async () => {
    await session?.ok('type', { tty: 1, expect: 'bash', text: 'mkdir -p outbox && printf "to: operator\\n\\nhello from the remote engine\\n" > outbox/m1 && ln -s /etc/shadow outbox/m2 && echo planted' });
    await waitFor(session!.call, /^planted$/m, 60);
    const postOffice = new PostOffice({ instance: () => test.instance, logger: silentLogger(), files: agentFilesFor(test.instance, remote.env) });
    expect(postOffice).toBeDefined();
    await postOffice.collect();
    const sent = await readdir(test.instance.paths.mail.sent);
    const texts = await Promise.all(sent.map((name) => readFile(path.join(test.instance.paths.mail.sent, name), 'utf8')));
    expect(texts.join('\n')).toContain('hello from the remote engine');
    expect(texts.join('\n')).not.toMatch(/root:/);
    // Both files left the outbox on the remote volume: one delivered, the link refused with a receipt.
    const files = new EngineAgentFiles({ engine, container: containerName(test.name), dataDir: test.dataDir, volume: dataVolumeName(test.name) });
    expect(await files.names('outbox')).toEqual([]);
    const events = await readFile(test.instance.paths.events, 'utf8');
    expect(events).toMatch(/"type":"message.sent"/);
    expect(events).toMatch(/"type":"message.refused".*not a regular file/);
  }, 120_000);

  it('refuses what does not reach the volume yet, in our words', async () => {
    await expect(takeSnapshot(test.instance, {} as never)).rejects.toThrow(/^Not available on a remote engine yet: snapshots .*the volume agent-kernel-t-\w+-data on tcp:/);
  });

  it('keeps the data volume on rm, and removes it with rm --data', async () => {
    await session?.close();
    session = undefined;
    const volume = dataVolumeName(test.name);
    const target = { name: test.name, dataDir: test.dataDir, paths: test.instance.paths, registered: false };
    const env = { ...process.env, ...remote.env };
    // What rm without --data asks of the engine (rm itself then forgets the instance: the operator's file goes).
    const kept = await removeInstanceResources(engine, test.name, undefined, { keepData: true });
    expect(kept.containers).toContain(containerName(test.name));
    expect(kept.kept.join('\n')).toContain(`volume ${volume} on ${remote.address}: the agent's data directory (kernel-runner rm ${test.name} --data removes it too)`);
    expect((await engine.docker.getVolume(volume).inspect()).Name).toBe(volume);
    const gone = await removeInstance(target, { data: true, watchSocket: path.join(test.instance.paths.stateRoot, 'no-watch.sock'), env });
    expect(gone.removed).toContain(`volume ${volume}`);
    await expect(engine.docker.getVolume(volume).inspect()).rejects.toThrow(/no such volume/i);
  }, 120_000);
});
