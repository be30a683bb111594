import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listUntrusted, readUntrustedText } from '../../../src/util/untrusted-fs.js';

// What the agent can plant in its data dir, against the host's reads: the canary must never come back.
let root: string;
let outside: string;
const CANARY = 'host-secret-canary-7f3a';

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ak-untrusted-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'ak-host-'));
  await writeFile(path.join(outside, 'secret'), CANARY);
  await mkdir(path.join(root, 'system'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('readUntrusted', () => {
  it('reads a regular file, and says undefined for a missing one', async () => {
    await writeFile(path.join(root, 'system', 'startup.json'), '{"terminals":[]}');
    expect(await readUntrustedText(root, 'system/startup.json')).toBe('{"terminals":[]}');
    expect(await readUntrustedText(root, 'system/nothing.json')).toBeUndefined();
    expect(await readUntrustedText(root, 'nowhere/nothing.json')).toBeUndefined();
  });

  it('refuses a link as the file, naming the file and what to do', async () => {
    await symlink(path.join(outside, 'secret'), path.join(root, 'system', 'agent_config.json'));
    await expect(readUntrustedText(root, 'system/agent_config.json')).rejects.toThrow(/agent_config\.json: a symbolic link .*Replace the link/);
  });

  it('refuses a link at any folder on the way', async () => {
    await rm(path.join(root, 'system'), { recursive: true });
    await writeFile(path.join(outside, 'agent_config.json'), CANARY);
    await symlink(outside, path.join(root, 'system'));
    await expect(readUntrustedText(root, 'system/agent_config.json')).rejects.toThrow(/symbolic link/);
    await expect(listUntrusted(root, 'system')).rejects.toThrow(/symbolic link/);
  });

  it('refuses a FIFO at once instead of blocking, and ".." in the path', async () => {
    execFileSync('mkfifo', [path.join(root, 'system', 'schedule.json')]);
    await expect(readUntrustedText(root, 'system/schedule.json')).rejects.toThrow(/not a regular file/);
    await expect(readUntrustedText(root, '../x')).rejects.toThrow(/climbs out/);
  });

  it('refuses a file over the size limit without reading it all', async () => {
    await writeFile(path.join(root, 'system', 'paused'), Buffer.alloc(2 * 1024 * 1024, 'a'));
    await expect(readUntrustedText(root, 'system/paused')).rejects.toThrow(/over the 1048576-byte limit/);
    expect(await readUntrustedText(root, 'system/paused', { maxBytes: 3 * 1024 * 1024 })).toHaveLength(2 * 1024 * 1024);
  });

  it('never returns the canary while a racer swaps the file for a link and back (randomized)', async () => {
    const file = path.join(root, 'system', 'agent_config.json');
    let stop = false;
    const racer = (async () => {
      for (let i = 0; !stop; i++) {
        await rm(file, { force: true });
        if (Math.random() < 0.5) await symlink(path.join(outside, 'secret'), file).catch(() => {});
        else await writeFile(file, '{}').catch(() => {});
        if (i % 16 === 0) await new Promise((r) => setImmediate(r));
      }
    })();
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const text = await readUntrustedText(root, 'system/agent_config.json').catch((e: Error & { code?: string }) => (e.code === 'UNTRUSTED_FILE' ? 'refused' : e.message));
      seen.add(text ?? 'missing');
    }
    stop = true;
    await racer;
    // The invariant: whatever the timing, the host file never comes back (refusals vary with the interleaving).
    expect(seen.has('refused') || seen.has('{}')).toBe(true);
    expect([...seen].join()).not.toContain(CANARY);
  });

  it('lists a folder without following links: links are "link", FIFOs "other"', async () => {
    await writeFile(path.join(root, 'system', 'a'), '1');
    await symlink(path.join(outside, 'secret'), path.join(root, 'system', 'b'));
    await mkdir(path.join(root, 'system', 'c'));
    execFileSync('mkfifo', [path.join(root, 'system', 'd')]);
    expect((await listUntrusted(root, 'system'))?.map(({ name, kind }) => ({ name, kind }))).toEqual([
      { name: 'a', kind: 'file' },
      { name: 'b', kind: 'link' },
      { name: 'c', kind: 'dir' },
      { name: 'd', kind: 'other' },
    ]);
  });
});
