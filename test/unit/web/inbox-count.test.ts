import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { registerInstance } from '../../../src/config/registry.js';
import { sendOperatorMessage } from '../../../src/mail/operator-send.js';
import { gatherStatus } from '../../../src/runner/watch/service/status-view.js';
import { listInstances } from '../../../src/web/web-data.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'web-inbox-'));
  vi.stubEnv('AGENT_KERNEL_CONFIG_DIR', path.join(root, 'config'));
  vi.stubEnv('AGENT_KERNEL_STATE_DIR', path.join(root, 'state'));
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(root, { recursive: true, force: true });
});

it('the overview counts what waits for the model with no watch running: queued mail and inbox notes', async () => {
  const dataDir = path.join(root, 'data');
  await mkdir(path.join(dataDir, 'system'), { recursive: true });
  await registerInstance('quiet', dataDir);
  const paths = instancePaths('quiet', dataDir);
  // What a person just sent with kernel-runner send (host-private queue), and a note the agent left itself.
  await sendOperatorMessage({ name: 'quiet', paths }, { text: 'check the nightly build' });
  await mkdir(path.join(dataDir, 'inbox'), { recursive: true });
  await writeFile(path.join(dataDir, 'inbox', 'note.md'), 'remember the backup');
  const [summary] = await listInstances(() => gatherStatus(undefined));
  expect(summary?.name).toBe('quiet');
  expect(summary?.inboxWaiting).toBe(2);
});
