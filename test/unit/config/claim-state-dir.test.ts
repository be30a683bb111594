import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInstance } from '../../../src/config/instance.js';

describe('one state directory per data directory', () => {
  let root: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ak-claim-'));
    env = { AGENT_KERNEL_STATE_DIR: path.join(root, 'state'), AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config') };
    for (const dir of ['a/scout', 'b/scout']) await mkdir(path.join(root, dir), { recursive: true });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a second directory with the same name instead of sharing locks, seen marks and configuration', async () => {
    await loadInstance('scout', path.join(root, 'a/scout'), env);
    await loadInstance('scout', path.join(root, 'a/scout'), env);
    await expect(loadInstance('scout', path.join(root, 'b/scout'), env)).rejects.toThrow(
      /The instance name "scout" belongs to .*\/a\/scout, and .*\/b\/scout is another directory with the same name/,
    );
  });

  it('a registered name follows the registry to its new directory', async () => {
    await loadInstance('scout', path.join(root, 'a/scout'), env);
    await expect(loadInstance('scout', path.join(root, 'b/scout'), env, true)).resolves.toMatchObject({ dataDir: path.join(root, 'b/scout') });
    await expect(loadInstance('scout', path.join(root, 'a/scout'), env)).rejects.toThrow(/belongs to .*\/b\/scout/);
  });
});
