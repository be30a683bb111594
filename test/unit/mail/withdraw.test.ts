import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instancePaths } from '../../../src/config/paths.js';
import { isCodedError } from '../../../src/errors.js';
import { type MailRecord, newMessageId } from '../../../src/mail/mail-record.js';
import { enqueue, markDelivered } from '../../../src/mail/mail-store.js';
import { withdrawMessage } from '../../../src/mail/withdraw.js';

/** A seeded generator, so that a failing trial can be repeated. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('withdrawMessage', () => {
  let root: string;
  let instance: { name: string; paths: ReturnType<typeof instancePaths> };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ak-withdraw-'));
    const env = { ...process.env, AGENT_KERNEL_STATE_DIR: path.join(root, 'state'), AGENT_KERNEL_CONFIG_DIR: path.join(root, 'config') };
    instance = { name: 'w', paths: instancePaths('w', path.join(root, 'data'), env) };
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const record = (now: Date): MailRecord => ({ id: newMessageId(now), from: { kind: 'operator' }, to: 'w', text: 'hello', sent: now.toISOString() });
  const files = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));

  it('races a delivery 200 times: each message is delivered or withdrawn, never both, never lost', async () => {
    const random = seeded(37);
    for (let trial = 0; trial < 200; trial++) {
      const m = record(new Date(Date.UTC(2026, 0, 1, 0, 0, 0, trial)));
      await enqueue(instance.paths.mail, m);
      const jitter = () => new Promise<void>((r) => (random() < 0.5 ? setImmediate(r) : setTimeout(r, Math.floor(random() * 3))));
      const [delivered, withdrawn] = await Promise.all([
        jitter().then(() => markDelivered(instance.paths.mail, m.id, 1)),
        jitter().then(() =>
          withdrawMessage(instance, m.id).then(
            () => true,
            (error: unknown) => {
              if (!isCodedError(error)) throw error;
              return false;
            },
          ),
        ),
      ]);
      const inDelivered = (await files(instance.paths.mail.delivered)).includes(`${m.id}.json`);
      const inWithdrawn = (await files(instance.paths.mail.withdrawn)).includes(`${m.id}.json`);
      expect({ trial, delivered: delivered !== undefined, withdrawn }).toEqual({ trial, delivered: inDelivered, withdrawn: inWithdrawn });
      expect(inDelivered !== inWithdrawn, `trial ${trial}: exactly one of delivered and withdrawn`).toBe(true);
    }
    expect(await files(instance.paths.mail.queue)).toEqual([]);
  });

  it('refuses a delivered message, an unknown id and a malformed one, in words that name the next step', async () => {
    const m = record(new Date(Date.UTC(2026, 1, 1)));
    await enqueue(instance.paths.mail, m);
    await markDelivered(instance.paths.mail, m.id, 4);
    await expect(withdrawMessage(instance, m.id)).rejects.toThrow(/already had it in tick 4/);
    await expect(withdrawMessage(instance, 'm-20260101-000000000-abcdef')).rejects.toThrow(/has no message .*kernel-runner mail w/);
    await expect(withdrawMessage(instance, '../../etc/passwd')).rejects.toThrow(/not a message id/);
  });
});
