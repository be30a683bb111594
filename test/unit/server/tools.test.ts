import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodedError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { createMcpServer } from '../../../src/server/create-server.js';
import { MAX_RESULT_TEXT_CHARS } from '../../../src/server/tools/render.js';
import { PROGRESS_INTERVAL_MS } from '../../../src/server/tools/wait.js';
import { TerminalsRuntime } from '../../../src/server/terminals/runtime.js';
import type { Terminals } from '../../../src/server/terminals/terminals.js';
import { FakeTerminals } from './fake-terminals.js';
import { makeUnitDataDir, removeUnitDataDir, unitPaths } from '../../helpers/test-instance.js';

let dataDir: string;

beforeEach(async () => {
  dataDir = await makeUnitDataDir('ak-server-unit-');
});
afterEach(async () => {
  await removeUnitDataDir(dataDir);
});

async function connect(start: () => Promise<Terminals>) {
  const runtime = new TerminalsRuntime(start, silentLogger());
  const { server, cleanup } = createMcpServer({
    runtime,
    instance: { name: 'unit', dataDir, paths: unitPaths('unit', dataDir) },
    logger: silentLogger(),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'unit-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  const call = async (name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) =>
    (await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : undefined)) as CallToolResult;
  return { client, call, runtime, close: () => Promise.all([client.close(), cleanup()]) };
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('the five tools over a linked in-memory transport', () => {
  it('lists login, open, type, wait and close with descriptions, described fields and annotations', async () => {
    const session = await connect(() => Promise.resolve(new FakeTerminals(dataDir)));
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['login', 'open', 'type', 'wait', 'close']);
    const type = tools.find((t) => t.name === 'type');
    expect(type?.description).toMatch(/wait\(\) first/);
    expect(type?.description).toMatch(/parallel/);
    expect(type?.inputSchema.required).toEqual(['tty', 'expect', 'text']);
    const props = type?.inputSchema.properties as Record<string, { description?: string }>;
    for (const field of ['tty', 'expect', 'text', 'enter']) expect(props[field]?.description).toBeTruthy();
    expect(type?.annotations?.destructiveHint).toBe(true);
    expect(tools.find((t) => t.name === 'wait')?.annotations?.readOnlyHint).toBe(true);
    for (const tool of tools) expect(tool.outputSchema).toBeDefined();
    await session.close();
  });

  it('refuses every tool but login before login, naming login', async () => {
    const session = await connect(() => Promise.resolve(new FakeTerminals(dataDir)));
    for (const [name, args] of [
      ['open', {}],
      ['type', { tty: 0, expect: 'bash', text: 'ls' }],
      ['wait', { timeout: 0 }],
      ['close', { tty: 0 }],
    ] as const) {
      const result = await session.call(name, args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/NOT_LOGGED_IN.*call login\(\) first/);
    }
    await session.close();
  });

  it('login opens the startup terminals, reads the tick, reports lost TTYs and unseen output; a second login is harmless', async () => {
    await writeFile(path.join(dataDir, 'system', 'startup.json'), JSON.stringify({ terminals: [{ tty: 0, command: 'cat notes.md; bash' }, { tty: 2 }] }));
    await mkdir(path.dirname(unitPaths('unit', dataDir).state), { recursive: true });
    await writeFile(unitPaths('unit', dataDir).state, JSON.stringify({ tick: 41, status: 'running' }));
    const fake = new FakeTerminals(dataDir);
    fake.adoptReport = { adopted: [], lost: [{ tty: 5, command: 'bash', scrollbackPrev: '/x/tty_5/scrollback.prev' }], persistent: true };
    const session = await connect(() => Promise.resolve(fake));

    const first = await session.call('login');
    expect(first.isError).toBeFalsy();
    const text = textOf(first);
    expect(text).toContain('tick 41');
    expect(text).toContain('TTY 0 (cat notes.md; bash)');
    expect(text).toMatch(/Lost in a container restart: TTY 5.*scrollback\.prev/);
    expect(text).toMatch(/Unseen output: TTY 0 \(1 line\), TTY 2/);
    expect(first.structuredContent).toMatchObject({ tick: 41, capacity: { used: 2, max: 20 }, opened: [{ tty: 0 }, { tty: 2 }] });

    const second = await session.call('login');
    expect(second.isError).toBeFalsy();
    expect(second.structuredContent).toMatchObject({ alreadyLoggedIn: true, opened: [], capacity: { used: 2 } });
    await session.close();
  });

  it('reports an engine that is down as an isError login, and a later login succeeds once it is back', async () => {
    let engineUp = false;
    const session = await connect(() =>
      engineUp
        ? Promise.resolve(new FakeTerminals(dataDir))
        : Promise.reject(new CodedError('ENGINE_UNREACHABLE', 'Cannot reach the container engine at /var/run/docker.sock.')),
    );
    const down = await session.call('login');
    expect(down.isError).toBe(true);
    expect(textOf(down)).toMatch(/ENGINE_UNREACHABLE.*\n.*login\(\) again/s);
    expect((await session.call('wait', { timeout: 0 })).isError).toBe(true);

    engineUp = true;
    const up = await session.call('login');
    expect(up.isError).toBeFalsy();
    expect(textOf(up)).toContain('Logged in');
    await session.close();
  });

  it('runs a whole session: open, type, wait, close, with observe-before-act refusals', async () => {
    await writeFile(path.join(dataDir, 'system', 'startup.json'), JSON.stringify({ terminals: [] }));
    const session = await connect(() => Promise.resolve(new FakeTerminals(dataDir)));
    await session.call('login');

    const opened = await session.call('open');
    expect(opened.structuredContent).toMatchObject({ tty: 0, command: 'bash', capacity: { used: 1, max: 20 } });

    const refused = await session.call('type', { tty: 0, expect: 'bash', text: 'echo hi' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^UNSEEN_OUTPUT: TTY 0 has news you have not seen: .*Call wait\(\) to see it, then type again\./);

    const seen = await session.call('wait', { timeout: 1 });
    expect(textOf(seen)).toContain('started bash');

    const mismatch = await session.call('type', { tty: 0, expect: 'python3', text: 'print(1)' });
    expect(textOf(mismatch)).toMatch(/^EXPECT_MISMATCH: TTY 0 is running bash, not python3\. Nothing was sent\. The shell is at its prompt: python3 ended, or never started\. Call wait\(\) to see the screen, then type with expect: "bash"\.$/);

    const typed = await session.call('type', { tty: 0, expect: 'bash', text: 'echo hi' });
    expect(typed.structuredContent).toMatchObject({ tty: 0, sent: 'text', enter: true });

    const waited = await session.call('wait');
    expect(waited.structuredContent).toMatchObject({ reason: 'command-finished', changed: [{ tty: 0, exitCode: 0, diff: '$ echo hi' }] });
    // One terminal changed: one line names it, its exit code and duration, and how long the wait took.
    expect(textOf(waited)).toMatch(/^TTY 0 \| bash \| exit 0 \| 5 ms \(waited \d+ ms\)\n\$ echo hi$/);

    const closed = await session.call('close', { tty: 0 });
    expect(textOf(closed)).toMatch(/Closed TTY 0; its scrollback is archived at .*tty_0-tick-000/);
    const again = await session.call('close', { tty: 0 });
    expect(textOf(again)).toMatch(/^TTY_NOT_FOUND: TTY 0 is not open \(none is open\)\. Open one with open\(\)\.$/);
    await session.close();
  });

  it('keeps a wait result under the size cap and points at the scrollback file', async () => {
    await writeFile(path.join(dataDir, 'system', 'startup.json'), JSON.stringify({ terminals: [] }));
    const fake = new FakeTerminals(dataDir);
    const session = await connect(() => Promise.resolve(fake));
    await session.call('login');
    for (let i = 0; i < 3; i++) await session.call('open');
    await session.call('wait');
    // The fake inlines up to 20 lines; make each terminal's text huge as a real full screen could be.
    for (const tty of fake.ttys.values()) tty.unseen = [Array.from({ length: 2000 }, (_, i) => `row ${i} ${'y'.repeat(50)}`).join('\n')];
    const result = await session.call('wait');
    const text = textOf(result);
    expect(text.length).toBeLessThan(MAX_RESULT_TEXT_CHARS + 2000);
    expect(text).toMatch(/characters left out to keep this result short; the full text is in .*tty_0\/scrollback/);
    expect(text).toContain('row 0 ');
    expect(text).toContain('row 1999 ');
    expect(JSON.stringify(result.structuredContent).length).toBeLessThan(MAX_RESULT_TEXT_CHARS + 4000);
    await session.close();
  });

  it('answers an unexpected failure with isError and keeps serving', async () => {
    const fake = new FakeTerminals(dataDir);
    const session = await connect(() => Promise.resolve(fake));
    await session.call('login');
    fake.failNext = new TypeError("Cannot read properties of undefined (reading 'pane')");
    const broken = await session.call('open');
    expect(broken.isError).toBe(true);
    expect(textOf(broken)).toMatch(/INTERNAL: open failed: Cannot read properties.*still running/);
    expect((await session.call('open')).isError).toBeFalsy();
    await session.close();
  });

  it('starts the terminals again after tmux went away, and login reopens the startup terminals', async () => {
    const fakes: FakeTerminals[] = [];
    const session = await connect(() => {
      fakes.push(new FakeTerminals(dataDir));
      return Promise.resolve(fakes.at(-1) as FakeTerminals);
    });
    await session.call('login');
    expect(fakes[0]?.ttys.size).toBe(1);
    (fakes[0] as FakeTerminals).failNext = new CodedError('TMUX_FAILED', 'The connection to tmux ended (exit -1).');
    const broken = await session.call('wait', { timeout: 0 });
    expect(textOf(broken)).toMatch(/^TMUX_FAILED: .*\nCall login\(\) again/);
    expect(fakes[0]?.disposed).toBe(true);
    const again = await session.call('login');
    expect(again.structuredContent).toMatchObject({ alreadyLoggedIn: false, opened: [{ tty: 0 }] });
    expect(fakes).toHaveLength(2);
    await session.close();
  });

  it('aborts a wait whose caller gives up: output pending during it stays unseen, and the next wait returns exactly that', async () => {
    await writeFile(path.join(dataDir, 'system', 'startup.json'), JSON.stringify({ terminals: [] }));
    const fake = new FakeTerminals(dataDir);
    const session = await connect(() => Promise.resolve(fake));
    await session.call('login');
    await session.call('open');
    await session.call('wait', { timeout: 1 });
    await session.call('type', { tty: 0, expect: 'bash', text: 'print 3' });
    const pending = [...(fake.ttys.get(0)?.unseen ?? [])];
    expect(pending).toHaveLength(4);
    // The wait is busy (as for a command still running) while that output is pending; then the client gives up.
    fake.holdWaits = true;
    const controller = new AbortController();
    const waiting = session.call('wait', { timeout: 50 }, controller.signal);
    await expect.poll(() => fake.waitsBlocked).toBe(1);
    controller.abort();
    await expect(waiting).rejects.toThrow();
    await expect.poll(() => fake.waitsAborted).toBe(1);
    expect(fake.ttys.get(0)?.unseen).toEqual(pending);
    const refused = await session.call('type', { tty: 0, expect: 'bash', text: 'echo more' });
    expect(textOf(refused)).toMatch(/^UNSEEN_OUTPUT: TTY 0 has news you have not seen/);

    fake.holdWaits = false;
    const after = await session.call('wait', { timeout: 1 });
    expect(after.structuredContent).toMatchObject({ changed: [{ tty: 0, diff: pending.join('\n'), totalLines: 4 }] });
    expect(fake.ttys.get(0)?.unseen).toEqual([]);
    await session.close();
  });

  it('answers a call that comes as the server shuts down with SHUTTING_DOWN and the next step, not an internal error', async () => {
    await writeFile(path.join(dataDir, 'system', 'startup.json'), JSON.stringify({ terminals: [] }));
    const fake = new FakeTerminals(dataDir);
    const session = await connect(() => Promise.resolve(fake));
    await session.call('login');
    await session.runtime.dispose();
    expect(fake.disposed).toBe(true);
    for (const [name, args] of [
      ['login', {}],
      ['open', {}],
      ['wait', { timeout: 0 }],
    ] as const) {
      const result = await session.call(name, args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^SHUTTING_DOWN: This server is stopping .*nothing was done\. .*call login\(\) again in a few seconds/);
    }
    await session.close();
  });

  it('tells a client that asked for progress that a long wait is still working, so its request timeout never fires', async () => {
    await writeFile(path.join(dataDir, 'system', 'startup.json'), JSON.stringify({ terminals: [] }));
    const session = await connect(() => Promise.resolve(new FakeTerminals(dataDir)));
    await session.call('login');
    const progress: Array<{ progress: number; message?: string }> = [];
    const began = Date.now();
    // A 3.5 s request timeout, reset by each notification: the 12 s wait still succeeds.
    const result = (await session.client.callTool({ name: 'wait', arguments: { timeout: 12 } }, undefined, {
      timeout: PROGRESS_INTERVAL_MS + 1500,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p),
    })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(Date.now() - began).toBeGreaterThanOrEqual(11_500);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]?.message).toMatch(/^waiting: \d+ s of at most 12 s$/);
    await session.close();
  }, 30_000);
});
