import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { ForegroundProbe, parseProbeReply, probeCommand } from '../../../src/tty/probe/foreground-probe.js';
import { type ForegroundProcess, classifyForeground, waitTimerMs } from '../../../src/tty/probe/input-wait.js';
import { tmuxArgv, tmuxSocketName } from '../../../src/tty/host/tmux-server.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type Terminals, startTerminals, waitFor } from './helpers/terminals.js';
import { pollUntil } from '../../helpers/poll.js';

// The probe reads timers and poll fds from the memory of processes in the hardened container (root, no ptrace capability).
describeWithEngine('the foreground probe reads timed waits and poll fds in the container', () => {
  let t: Terminals;
  let probe: ForegroundProbe;
  let tty: number;
  let panePid: number;
  const foreground = async (name: string): Promise<ForegroundProcess | undefined> => {
    const sample = (await probe.sample([panePid]))?.get(panePid);
    return sample?.processes.find((p) => p.name === name);
  };

  const backToShell = () => expect.poll(async () => (await t.manager.wait({ timeoutMs: 5000 })).reason, { timeout: 30_000 }).toBe('command-finished');

  beforeAll(async () => {
    t = await startTerminals('docker');
    probe = new ForegroundProbe(t.sandbox, silentLogger());
    ({ tty } = await t.manager.open());
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    const panes = await t.sandbox.run(tmuxArgv(tmuxSocketName(t.sandbox, t.test.name), 'list-panes', '-a', '-F', '#{pane_pid}'), { env: { TMUX: '' } });
    panePid = Number(panes.stdout.trim().split('\n')[0]);
  }, 120_000);
  afterAll(async () => {
    probe?.close();
    await t?.cleanup();
  });

  it("reads vim's idle timer (updatetime, 4 s) and its shorter one after Escape (a key code's timeout)", async () => {
    await t.manager.type({ tty, expect: 'bash', text: `vi /tmp/probe-${process.pid}.txt` });
    await waitFor(t.manager, tty, (text) => /^~/m.test(text));
    const timers = new Set<number | undefined>();
    // After each key vim waits updatetime; right after an Escape it waits for the rest of a key code (vim-tiny: timeoutlen, 1 s).
    const seen = () => [...timers].filter((ms) => ms !== undefined);
    const both = () => seen().includes(4000) && seen().some((ms) => ms > 0 && ms <= 1000);
    try {
      for (let round = 0; round < 10 && !both(); round++) {
        await t.manager.type({ tty, expect: 'vi', text: 'Escape' });
        const until = Date.now() + 3000;
        while (Date.now() < until && !both()) timers.add((await foreground('vi'))?.timerMs);
      }
      expect(seen()).toContain(4000);
      expect(both(), `timers seen: ${seen().join(', ')}`).toBe(true);
      // Never the time left that the kernel writes back when a wait ends (0 after a timeout): only timers vim set.
      for (const ms of timers) if (ms !== undefined) expect([25, 100, 1000, 4000], `timer ${ms} ms`).toContain(ms);
    } finally {
      await t.manager.wait({ timeoutMs: 1000 });
      await t.manager.type({ tty, expect: 'vi', text: ':q!' });
      await backToShell();
    }
  }, 90_000);

  it('tells a poll on the terminal from `tail -f` polling its inotify fd (a file in the data dir)', async () => {
    await t.manager.wait({ timeoutMs: 1000 });
    await t.manager.type({ tty, expect: 'bash', text: `seq 3 > ${t.test.dataDir}/follow.txt; tail -f ${t.test.dataDir}/follow.txt` });
    await expect.poll(async () => (await foreground('tail'))?.pollsTerminal, { timeout: 30_000 }).toBe(false);
    expect(classifyForeground((await probe.sample([panePid]))?.get(panePid))).toBe('busy');
    await t.manager.type({ tty, expect: 'tail', text: 'C-c' });
    await backToShell();
    // python's input() blocks in read on fd 0: no W line, and waiting for input.
    await t.manager.wait({ timeoutMs: 1000 });
    await t.manager.type({ tty, expect: 'bash', text: `python3 -c 'input("name? ")'` });
    // bash at its prompt waits for input too: first python3 in the foreground, then its state.
    await expect.poll(async () => (await foreground('python3')) !== undefined, { timeout: 30_000 }).toBe(true);
    await expect.poll(async () => classifyForeground((await probe.sample([panePid]))?.get(panePid)), { timeout: 30_000 }).toBe('input');
    expect((await foreground('python3'))?.pollsTerminal).toBeUndefined();
    await t.manager.type({ tty, expect: 'python3', text: 'C-c' });
  }, 90_000);
});

// The probe script itself on this machine (bash and tmux only): its memory reads, and what it says when dd or od lie.
describe('the probe script on the host', () => {
  const socket = `ak-probe-${process.pid}`;
  let evil: string;
  let panePid: number;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: { ...process.env, TMUX: '' } });
  // Two questions, the second's answer: a select's timer is read after the first answer, for the next question.
  const probe = (env: NodeJS.ProcessEnv = process.env) => {
    const out = execFileSync('bash', probeCommand().slice(1), { input: `${panePid}\n${panePid}\n`, encoding: 'utf8', env, timeout: 10_000 });
    const replies = out.split('E\n');
    return parseProbeReply(replies[1]!.split('\n')).get(panePid);
  };

  beforeAll(async () => {
    evil = mkdtempSync(path.join(os.tmpdir(), 'ak-probe-evil-'));
    tmux('new-session', '-d', '-x', '80', '-y', '24', 'bash --noprofile --norc');
    panePid = Number(tmux('list-panes', '-F', '#{pane_pid}').trim());
    // bash's own read with a timeout waits in pselect6 with a 100 s timer.
    tmux('send-keys', 'read -t 100 answer', 'Enter');
    await pollUntil(() => classifyForeground(probe()) === 'input-timed', 'bash to wait in read -t', { timeoutMs: 20_000 });
  }, 30_000);
  afterAll(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(evil, { recursive: true, force: true });
  });

  it('reads a timer from the waiting process memory', () => {
    const sample = probe();
    expect(sample?.processes[0]).toMatchObject({ name: 'bash', timerMs: 100_000 });
    expect(classifyForeground(sample)).toBe('input-timed');
    expect(waitTimerMs(sample)).toBe(100_000);
  });

  // The container may lie about its own timers (that only changes its own waits), but not break the probe or the parser.
  it('gives no timer, and no error, when dd and od answer junk', () => {
    for (const [dd, od] of [
      ['head -c 100 /dev/zero', 'echo "99999999999999999999 -5 * /etc/*"'],
      ['echo nonsense', 'echo -1 -2'],
      ['echo nonsense', 'echo 12345678 0'],
      ['exit 1', 'exit 1'],
      ['head -c 100000 /dev/urandom', 'head -c 300000 /dev/urandom | base64 -w0'],
    ]) {
      writeFileSync(path.join(evil, 'dd'), `#!/bin/sh\n${dd}\n`, { mode: 0o755 });
      writeFileSync(path.join(evil, 'od'), `#!/bin/sh\ncat > /dev/null; ${od}\n`, { mode: 0o755 });
      const sample = probe({ ...process.env, PATH: `${evil}:${process.env.PATH}` });
      expect(sample?.processes[0]?.name, `${dd} | ${od}`).toBe('bash');
      expect(sample?.processes[0]?.timerMs, `${dd} | ${od}`).toBeUndefined();
      expect(classifyForeground(sample)).toBe('input-timed');
    }
  });

  // A wait that ends while its timer is read has the time left written back (0 after a timeout): that is not the program's timer.
  it('gives no timer when the process ran while its memory was read', () => {
    writeFileSync(path.join(evil, 'dd'), `#!/bin/sh\n/usr/bin/dd "$@"; kill -WINCH ${panePid}; sleep 0.1\n`, { mode: 0o755 });
    writeFileSync(path.join(evil, 'od'), '#!/bin/sh\nexec /usr/bin/od "$@"\n', { mode: 0o755 });
    const sample = probe({ ...process.env, PATH: `${evil}:${process.env.PATH}` });
    expect(sample?.processes[0]?.name).toBe('bash');
    expect(sample?.processes[0]?.timerMs).toBeUndefined();
    // Nothing woke it this time: its own timer again.
    expect(probe()?.processes[0]?.timerMs).toBeGreaterThan(1000);
  });

  it('remembers a timer for the next question while the process has not run, and reads it again once it has', async () => {
    // dd answers the first time only; after that it prints junk.
    const used = path.join(evil, 'dd-used');
    writeFileSync(path.join(evil, 'dd'), `#!/bin/sh\nif [ -e ${used} ]; then echo junk; exit 0; fi\n: > ${used}\nexec /usr/bin/dd "$@"\n`, { mode: 0o755 });
    writeFileSync(path.join(evil, 'od'), '#!/bin/sh\nexec /usr/bin/od "$@"\n', { mode: 0o755 });
    const child = spawn('bash', probeCommand().slice(1), { env: { ...process.env, PATH: `${evil}:${process.env.PATH}` } });
    const lines = createInterface({ input: child.stdout });
    const reply: string[] = [];
    const replies: string[][] = [];
    lines.on('line', (line) => (line === 'E' ? replies.push(reply.splice(0)) : reply.push(line)));
    const ask = async () => {
      const count = replies.length;
      child.stdin.write(`${panePid}\n`);
      await expect.poll(() => replies.length, { timeout: 5000 }).toBe(count + 1);
      return parseProbeReply(replies[count]!).get(panePid)?.processes[0]?.timerMs;
    };
    try {
      // Read just after the first answer, for the next question.
      expect(await ask()).toBeUndefined();
      expect(await ask()).toBeGreaterThan(1000);
      expect(await ask()).toBeGreaterThan(1000);
      // The kernel counts each time the process is run (schedstat's third field): wait until the signal made it run.
      const runs = () => readFileSync(`/proc/${panePid}/schedstat`, 'utf8').split(' ')[2];
      const before = runs();
      process.kill(panePid, 'SIGWINCH');
      await pollUntil(() => runs() !== before, 'bash to run after SIGWINCH', { timeoutMs: 5000, intervalMs: 5 });
      // It ran: read again (dd now lies), so no timer.
      expect(await ask()).toBeUndefined();
      expect(await ask()).toBeUndefined();
    } finally {
      child.kill();
    }
  });
});
