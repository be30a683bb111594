import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInstance } from '../../../src/config/instance.js';
import { instanceStateRoot } from '../../../src/config/homes.js';

/**
 * An instance's host-only state moved from the folder `kernel/` of older versions to `private/`:
 * the first command of the new version that loads the instance moves it, so its seen marks, mail
 * and tick files are still there; it refuses while an older process still holds the instance.
 */
describe('the state folder of an instance made by an older version', () => {
  let root: string;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let oldFolder: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ak-migrate-'));
    env = { AGENT_KERNEL_STATE_DIR: path.join(root, 'state'), AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config') };
    dataDir = path.join(root, 'scout');
    await mkdir(dataDir, { recursive: true });
    oldFolder = path.join(instanceStateRoot('scout', env), 'kernel');
    await mkdir(path.join(oldFolder, 'mail', 'queue'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(oldFolder, 'ttys.json'), '{"seen":"marks"}\n');
    await writeFile(path.join(oldFolder, 'mail', 'queue', 'm-1.json'), '{"from":"operator"}\n');
    await writeFile(path.join(oldFolder, 'data-dir'), `${dataDir}\n`);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('moves to private/ at the first load, seen marks and queued mail kept, its lock renamed', async () => {
    await writeFile(path.join(oldFolder, 'server.lock'), JSON.stringify({ pid: 2 ** 22 + 1, started: 'long ago', role: 'kernel' }));
    const instance = await loadInstance('scout', dataDir, env);
    expect(instance.paths.privateState).toBe(path.join(instanceStateRoot('scout', env), 'private'));
    expect(await readFile(path.join(instance.paths.privateState, 'ttys.json'), 'utf8')).toBe('{"seen":"marks"}\n');
    expect(await readFile(path.join(instance.paths.mail.queue, 'm-1.json'), 'utf8')).toBe('{"from":"operator"}\n');
    expect(await readFile(instance.paths.instanceLock, 'utf8')).toContain('long ago');
    await expect(stat(oldFolder)).rejects.toMatchObject({ code: 'ENOENT' });
    // Loading again changes nothing.
    await loadInstance('scout', dataDir, env);
    expect(await readFile(path.join(instance.paths.privateState, 'ttys.json'), 'utf8')).toBe('{"seen":"marks"}\n');
  });

  it('refuses while a live process of the older version holds the instance, and says what to stop', async () => {
    await writeFile(path.join(oldFolder, 'server.lock'), JSON.stringify({ pid: process.pid, started: 'now', role: 'kernel' }));
    await expect(loadInstance('scout', dataDir, env)).rejects.toThrow(
      new RegExp(`An older agent-kernel \\(PID ${process.pid}, kernel\\) still runs this instance from .*/kernel\\. Stop it .*then run this again`),
    );
    expect(await readFile(path.join(oldFolder, 'ttys.json'), 'utf8')).toBe('{"seen":"marks"}\n');
    await expect(stat(path.join(instanceStateRoot('scout', env), 'private'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('leaves an old folder alone once private/ exists', async () => {
    await mkdir(path.join(instanceStateRoot('scout', env), 'private'), { mode: 0o700 });
    const instance = await loadInstance('scout', dataDir, env);
    expect(await readFile(path.join(oldFolder, 'ttys.json'), 'utf8')).toBe('{"seen":"marks"}\n');
    await expect(stat(path.join(instance.paths.privateState, 'ttys.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
