import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../../src/sandbox/docker-sandbox.js';
import { type Engine, connectEngine } from '../../../src/sandbox/engine/engine.js';
import { CONTAINER_ULIMITS } from '../../../src/sandbox/engine/ulimits.js';
import { EngineAgentFiles } from '../../../src/sandbox/files/engine-files.js';
import { type AgentFiles, LocalAgentFiles } from '../../../src/util/agent-files.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { TEST_IMAGE } from '../../helpers/test-instance.js';

const SECRET = 'CANARY-outside-the-volume-5b1e';
const DATA = '/srv/agent-data';

/**
 * "The agent's files" through the engine's API, on a volume: the agent (root in its container)
 * plants links, FIFOs, huge files and swaps entries while the host reads, lists, writes, moves
 * and removes. The host never gets what a link points to, never hangs on a FIFO, never takes a
 * huge file whole, and never writes through a link. The same contract is checked on the local
 * implementation (the bind-mounted folder), so both sides of the seam say the same.
 */
describeWithEngine('escape: the agent\'s files on an engine-side volume', () => {
  let engine: Engine;
  let files: EngineAgentFiles;
  let agentShell: DockerSandbox;
  const run = randomBytes(3).toString('hex');
  const volume = `agent-kernel-test-files-${run}`;
  const container = `agent-kernel-test-files-${run}`;

  async function agent(script: string): Promise<string> {
    const result = await agentShell.run(['sh', '-c', script], { timeoutMs: 60_000 });
    if (result.exitCode !== 0) throw new Error(`in the container: ${script}: ${result.stderr}`);
    return result.stdout;
  }

  beforeAll(async () => {
    engine = await connectEngine();
    await engine.docker.createVolume({ Name: volume, Labels: { 'agent-kernel.test': 'files' } });
    const created = await engine.docker.createContainer({
      name: container,
      Image: TEST_IMAGE,
      Cmd: ['sleep', 'infinity'],
      HostConfig: { NetworkMode: 'none', CapDrop: ['ALL'], CapAdd: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'], Init: true, Ulimits: CONTAINER_ULIMITS, Mounts: [{ Type: 'volume', Source: volume, Target: DATA }] },
    });
    await created.start();
    agentShell = new DockerSandbox({ engine, containerName: container, cwd: '/', user: '0' });
    files = new EngineAgentFiles({ engine, container, dataDir: DATA, volume });
    // The secret is the container's, outside the volume: only a followed link would hand it over.
    await agent(`printf '%s\\n' '${SECRET}' > /root/secret && mkdir -p ${DATA}/outbox`);
  }, 120_000);

  afterAll(async () => {
    await engine?.docker.getContainer(container).remove({ force: true }).catch(() => undefined);
    await engine?.docker.getVolume(volume).remove().catch(() => undefined);
  });

  it('reads, lists, writes, moves and removes regular files', async () => {
    expect(await files.writeNew('outbox/a.txt', 'hello')).toBe(true);
    expect(await files.writeNew('outbox/a.txt', 'again')).toBe(false);
    expect(Buffer.from((await files.read('outbox/a.txt', { maxBytes: 100 })) ?? []).toString()).toBe('hello');
    await files.writeAtomic('deep/er/b.json', '{"x":1}');
    expect(await agent(`cat ${DATA}/deep/er/b.json`)).toBe('{"x":1}');
    expect((await files.list('outbox'))?.map((e) => `${e.kind}:${e.name}`)).toEqual(['file:a.txt']);
    expect(await files.move('outbox/a.txt', 'outbox/done/a.txt')).toBe('moved');
    expect(await agent(`cat ${DATA}/outbox/done/a.txt`)).toBe('hello');
    expect(await files.remove('outbox/done/a.txt')).toBe(true);
    expect(await files.remove('outbox/done/a.txt')).toBe(false);
    expect(await files.read('outbox/missing', { maxBytes: 10 })).toBeUndefined();
    expect(await files.list('nothing-here')).toBeUndefined();
    await expect(files.read('../../root/secret', { maxBytes: 100 })).rejects.toThrow(/climbs out/);
  });

  it('never follows a link the agent planted, at the name or on the way', async () => {
    await agent(`ln -sfn /root/secret ${DATA}/outbox/link.txt && rm -rf ${DATA}/via && ln -sfn /root ${DATA}/via`);
    const readLink = await files.read('outbox/link.txt', { maxBytes: 1000 }).then(
      (data) => Buffer.from(data ?? []).toString(),
      (error: Error) => error.message,
    );
    expect(readLink).not.toContain(SECRET);
    expect(readLink).toMatch(/not a regular file/);
    await expect(files.list('via')).rejects.toThrow(/not a folder/);
    await expect(files.writeNew('via/planted', 'x')).rejects.toThrow(/never followed/);
    await expect(files.move('outbox/link.txt', 'outbox/moved.txt')).rejects.toThrow(/not a regular file/);
    expect(await agent(`ls /root`)).toBe('secret\n');
    // Replacing a planted link replaces the link itself: the file it pointed to is untouched.
    await files.writeAtomic('outbox/link.txt', 'ours');
    expect(await agent(`cat /root/secret; test -L ${DATA}/outbox/link.txt || echo not-a-link`)).toBe(`${SECRET}\nnot-a-link\n`);
  });

  it('refuses a FIFO without blocking, and a huge file without taking it', async () => {
    await agent(`mkfifo ${DATA}/outbox/fifo && truncate -s 300M ${DATA}/outbox/huge`);
    const started = Date.now();
    await expect(files.read('outbox/fifo', { maxBytes: 1000 })).rejects.toThrow(/not a regular file \(a fifo/);
    await expect(files.read('outbox/huge', { maxBytes: 64 * 1024 })).rejects.toThrow(/over the 65536-byte limit/);
    // 300 MB never crossed: the transfer is cut at the header (generous bound for a loaded machine).
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await files.list('outbox'))?.find((e) => e.name === 'fifo')?.kind).toBe('other');
    await agent(`rm -f ${DATA}/outbox/fifo ${DATA}/outbox/huge`);
  }, 60_000);

  // Docker resolves a path for getArchive inside the container's root (chrootarchive, after CVE-2018-15664), and
  // a link swapped in between its stat and its read is followed there: the bytes may be the container's own file
  // the link points at, cut to the size the stat gave (seen: 'CANARY', the secret's first 6 bytes for 'benign').
  // That is the agent's own data, hostile like everything it writes; never a byte from beyond the container.
  // Podman follows the link whole: what is longer than the stat is refused (seen: the whole secret, before).
  it('a file swapped for a link while read yields only the container\'s own bytes, never more than the stat said', async () => {
    // The agent flips outbox/swap between a regular file and a link to a file of its own, as fast as it can.
    await agent(`printf 'benign' > ${DATA}/outbox/plain; (i=0; while [ $i -lt 1500 ]; do ln -sfn /root/secret ${DATA}/outbox/swap; cp ${DATA}/outbox/plain ${DATA}/outbox/swap.t; mv -f ${DATA}/outbox/swap.t ${DATA}/outbox/swap; i=$((i+1)); done) >/dev/null 2>&1 &`);
    const outcomes = new Set<string>();
    for (let trial = 0; trial < 30; trial++) {
      const text = await files.read('outbox/swap', { maxBytes: 1000 }).then(
        (data) => (data === undefined ? 'missing' : Buffer.from(data).toString()),
        (error: Error) => (/not a regular file|changed while it was read/.test(error.message) ? 'refused' : error.message),
      );
      expect(text).not.toBe(`${SECRET}\n`);
      outcomes.add(text);
    }
    const ownPrefix = (o: string) => o.length <= 'benign'.length && `${SECRET}\n`.startsWith(o);
    expect([...outcomes].filter((o) => !['benign', 'refused', 'missing'].includes(o) && !ownPrefix(o))).toEqual([]);
  }, 120_000);

  it('keeps a listing bounded when the agent floods a folder', async () => {
    await agent(`mkdir -p ${DATA}/flood && cd ${DATA}/flood && seq 1 3000 | xargs touch && touch "$(printf 'bad\\nname')"`);
    const entries = await files.list('flood', { limit: 100 });
    expect(entries).toHaveLength(100);
    expect(entries?.every((e) => e.kind === 'file')).toBe(true);
    const all = await files.list('flood');
    expect(all?.length).toBe(3001);
  }, 60_000);
});

/** The local implementation keeps the same contract (its escape tests are planted-files.test.ts). */
describe('the agent\'s files in a host folder', () => {
  let root: string;
  let local: AgentFiles;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ak-agent-files-'));
    local = new LocalAgentFiles(root);
  });
  afterAll(async () => rm(root, { recursive: true, force: true }));

  it('answers as the engine implementation does', async () => {
    expect(local.local).toBe(true);
    expect(await local.writeNew('outbox/a.txt', 'hello')).toBe(true);
    expect(await local.writeNew('outbox/a.txt', 'again')).toBe(false);
    expect((await local.list('outbox'))?.map((e) => `${e.kind}:${e.name}`)).toEqual(['file:a.txt']);
    expect(await local.move('outbox/a.txt', 'outbox/done/a.txt')).toBe('moved');
    expect(await local.remove('outbox/done/a.txt')).toBe(true);
    expect(await local.list('nothing-here')).toBeUndefined();
    await expect(local.read('../x', { maxBytes: 10 })).rejects.toThrow(/climbs out/);
  });
});
