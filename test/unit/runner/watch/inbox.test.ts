import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureInbox,
  formatMessage,
  listPending,
  markDelivered,
  parseMessageFile,
  readPending,
  sendMessage,
  watchInbox,
} from '../../../../src/runner/watch/inbox.js';

let root: string;
let paths: { inbox: string; inboxDone: string };

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'inbox-'));
  paths = { inbox: path.join(root, 'inbox'), inboxDone: path.join(root, 'inbox', 'done') };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('sendMessage', () => {
  it('writes one JSON file with a sender, and leaves no temp file', async () => {
    const { id, file } = await sendMessage(paths, { text: 'hello there', from: 'alice' });
    expect(await readdir(paths.inbox)).toEqual([path.basename(file)]);
    const body = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    expect(body).toMatchObject({ from: 'alice', text: 'hello there', id });
    expect(typeof body.sent).toBe('string');
  });

  it('defaults the sender to operator and records reply_to', async () => {
    const { file } = await sendMessage(paths, { text: 'ok', replyTo: 'm-1' });
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ from: 'operator', reply_to: 'm-1' });
  });

  it('refuses an empty message and a bad sender', async () => {
    await expect(sendMessage(paths, { text: '  \n' })).rejects.toThrow(/The message is empty/);
    await expect(sendMessage(paths, { text: 'x', from: 'a b' })).rejects.toThrow(/Sender "a b" is not allowed/);
  });

  it('orders messages by name, oldest first', async () => {
    await sendMessage(paths, { text: 'first' }, new Date('2026-01-01T00:00:00Z'));
    await sendMessage(paths, { text: 'second' }, new Date('2026-01-02T00:00:00Z'));
    const messages = await readPending(paths, () => {});
    expect(messages.map((m) => m.text)).toEqual(['first', 'second']);
  });
});

describe('parseMessageFile', () => {
  const arrived = new Date('2026-11-22T08:00:00Z');
  it.each([
    ['m.json', '{"text":"hi","from":"bob"}', { ok: true, from: 'bob', text: 'hi', id: 'm' }],
    ['m.json', '{"text":"hi"}', { ok: true, from: 'unknown', text: 'hi' }],
    ['note.txt', 'plain words\n\n', { ok: true, from: 'unknown', text: 'plain words', id: 'note' }],
    ['m.json', '{"text":', { ok: false, reason: /not valid JSON/ }],
    ['m.json', '{"from":"bob"}', { ok: false, reason: /m\.json: text:/ }],
    ['m.json', '{"text":"x","color":"red"}', { ok: false, reason: /color/ }],
    ['empty.txt', '', { ok: false, reason: /empty/ }],
  ])('%s %s', (name, content, expected) => {
    const result = parseMessageFile(`/x/inbox/${name}`, content, arrived);
    expect(result.ok).toBe(expected.ok);
    if (result.ok) {
      const { ok: _ok, ...fields } = expected;
      expect(result.message).toMatchObject({ ...fields, sent: expect.any(String) as string });
    } else {
      expect(result.reason).toMatch((expected as { reason: RegExp }).reason);
    }
  });
});

describe('the inbox folder', () => {
  it('ignores dotfiles (writers in progress), backups and folders', async () => {
    await sendMessage(paths, { text: 'real' });
    await writeFile(path.join(paths.inbox, '.half-written.tmp'), '{"te');
    await writeFile(path.join(paths.inbox, 'draft.txt~'), 'x');
    expect(await listPending(paths)).toHaveLength(1);
  });

  it('moves bad files to inbox/invalid/ and reports why, losing nothing', async () => {
    await writeFile(path.join(paths.inbox.replace(/inbox$/, ''), 'placeholder'), '');
    await sendMessage(paths, { text: 'good' });
    await writeFile(path.join(paths.inbox, 'bad.json'), '{"nope": 1}');
    const reports: string[] = [];
    const messages = await readPending(paths, (file, reason) => reports.push(`${path.basename(file)}: ${reason}`));
    expect(messages.map((m) => m.text)).toEqual(['good']);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^bad\.json: /);
    expect(await readFile(path.join(paths.inbox, 'invalid', 'bad.json'), 'utf8')).toBe('{"nope": 1}');
  });

  it('moves delivered messages to inbox/done/', async () => {
    await sendMessage(paths, { text: 'deliver me' });
    const [message] = await readPending(paths, () => {});
    await markDelivered(paths, message!);
    expect(await listPending(paths)).toEqual([]);
    expect(await readdir(paths.inboxDone)).toEqual([path.basename(message!.file)]);
  });

  it('formats a message for the agent with its sender', async () => {
    await sendMessage(paths, { text: 'ping', from: 'peer-1', replyTo: 'm-9' });
    const [message] = await readPending(paths, () => {});
    expect(formatMessage(message!)).toMatch(/^Message m-\S+ from peer-1 \(sent .*, in reply to m-9\):\nping$/);
  });

  it('notices a new message (fs.watch or the poll)', async () => {
    await sendMessage(paths, { text: 'warm up' });
    let changes = 0;
    const watcher = watchInbox(paths, () => (changes += 1), 500);
    try {
      const before = changes;
      await sendMessage(paths, { text: 'new' });
      await until(() => changes > before);
    } finally {
      watcher.close();
    }
  });

  it('wakes on a new message by watching alone (no poll within the test)', async () => {
    await ensureInbox(paths);
    let changes = 0;
    const watcher = watchInbox(paths, () => (changes += 1), 600_000);
    try {
      // The watch is set asynchronously: keep sending until one wakes it.
      await until(async () => {
        await sendMessage(paths, { text: 'new' });
        return changes > 0 || undefined;
      });
    } finally {
      watcher.close();
    }
  });

  it('does not watch through an inbox the container made a link (to a busy host folder)', async () => {
    const hostDir = await mkdtemp(path.join(os.tmpdir(), 'ak-inbox-target-'));
    try {
      await rm(paths.inbox, { recursive: true, force: true });
      await symlink(hostDir, paths.inbox);
      let changes = 0;
      const watcher = watchInbox(paths, () => (changes += 1), 600_000);
      try {
        for (let i = 0; i < 20; i++) {
          await writeFile(path.join(hostDir, `busy-${i}`), 'x');
          await new Promise((r) => setTimeout(r, 10));
        }
        await mkdir(path.join(hostDir, 'more'));
        await new Promise((r) => setTimeout(r, 300));
        expect(changes).toBe(0);
      } finally {
        watcher.close();
      }
    } finally {
      await rm(hostDir, { recursive: true, force: true });
    }
  });
});
