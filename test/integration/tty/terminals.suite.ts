import { readFile, readdir, stat } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isKernelError } from '../../../src/errors.js';
import { containerName } from '../../../src/sandbox/container.js';
import { connectEngine } from '../../../src/sandbox/engine.js';
import { TtyManager } from '../../../src/tty/tty-manager.js';
import { tmuxArgv, tmuxSocketName } from '../../../src/tty/tmux-server.js';
import type { WaitResult } from '../../../src/tty/types.js';
import { startManagerChild } from './helpers/manager-child.js';
import { type Backend, type Terminals, reportOf, startTerminals, waitFor } from './helpers/terminals.js';
import { hostView } from '../../../src/config/paths.js';

async function codeOf(promise: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (isKernelError(error)) return { code: error.code, message: error.message, details: { ...error.details } };
    throw error;
  }
  throw new Error('expected a KernelError, but the call succeeded');
}

/** Open a shell and look at its first prompt, so that nothing is unseen. */
async function openShell(t: Terminals): Promise<number> {
  const { tty } = await t.manager.open();
  await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
  return tty;
}

/** Run a command in a shell and return the wait result of its completion. */
async function run(t: Terminals, tty: number, command: string, timeout = 20): Promise<WaitResult> {
  await t.manager.type({ tty, expect: 'bash', text: command });
  return t.manager.wait(timeout);
}

async function closeAll(t: Terminals): Promise<void> {
  await t.manager.wait(0);
  for (const info of t.manager.list()) await t.manager.close(info.tty);
}

/** The terminal tests, on one backend. */
export function defineTerminalTests(backend: Backend, describeFn: typeof describe = describe): void {
  // PTYs of the server (no tmux) end with it: nothing to re-adopt.
  const persistent = backend !== 'pty';
  describeFn(`terminals (${backend})`, () => {
    let t: Terminals;
    beforeAll(async () => {
      t = await startTerminals(backend);
    });
    afterAll(async () => {
      await t?.cleanup();
    });
    afterEach(async () => {
      // A failed test must not leave terminals (or unseen output) to the next one.
      if (t.manager.disposed) await t.restart();
      await closeAll(t);
    });

    it('reports exit codes 0, 1, 127 and 130 (Ctrl-C on sleep) as each command finishes', async () => {
      const tty = await openShell(t);
      const ok = await run(t, tty, 'true');
      expect(ok.reason).toBe('command-finished');
      expect(reportOf(ok, tty).exitCode).toBe(0);
      expect(reportOf(await run(t, tty, 'false'), tty).exitCode).toBe(1);
      const missing = reportOf(await run(t, tty, 'no-such-command-xyz'), tty);
      expect(missing.exitCode).toBe(127);
      expect(missing.text).toMatch(/not found/);

      // A command running silently is not "settled": the wait runs to its timeout.
      const sleeping = await run(t, tty, 'sleep 30', 3);
      expect(sleeping.reason).toBe('timeout');
      // Text needs the real foreground program; C-c may name the shell that owns the job.
      await expect(t.manager.type({ tty, expect: 'bash', text: 'echo no' })).rejects.toThrow(/running sleep, not bash/);
      await t.manager.type({ tty, expect: 'bash', text: 'C-c' });
      const interrupted = await t.manager.wait(10);
      expect(interrupted.reason).toBe('command-finished');
      expect(reportOf(interrupted, tty).exitCode).toBe(130);
      await closeAll(t);
    });

    it('keeps UTF-8, wide characters and long wrapped lines intact', async () => {
      const tty = await openShell(t);
      const unicode = reportOf(await run(t, tty, `printf 'caf\\303\\251 \\342\\202\\254 \\344\\270\\255\\346\\226\\207 \\360\\237\\230\\200 end\\n'`), tty);
      expect(unicode.text).toContain('café € 中文 😀 end');
      const long = reportOf(await run(t, tty, `printf 'A%.0s' $(seq 1 300); echo B`), tty);
      expect(long.text.split('\n')).toContain(`${'A'.repeat(300)}B`);
      await closeAll(t);
    });

    it('shows the head and tail of a million lines, counts what it left out, and keeps all of it in the scrollback file', async () => {
      const tty = await openShell(t);
      const rssBefore = process.memoryUsage().rss;
      const result = await run(t, tty, 'seq 1 1000000', 60);
      expect(result.reason).toBe('command-finished');
      const report = reportOf(result, tty);
      const lines = report.text.split('\n');
      // A million numbers and the new prompt (not the command line the agent typed).
      expect(report.totalLines).toBe(1_000_001);
      expect(lines.slice(0, 9)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
      expect(lines).toContain('1000000');
      expect(report.elidedLines).toBe(1_000_001 - 20);
      expect(lines.find((l) => l.includes('left out'))).toContain(`${1_000_001 - 20} more lines left out`);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
      const scrollback = await readFile(hostView(t.test.instance.paths, report.files.scrollback), 'utf8');
      const numbers = scrollback.split('\n').filter((l) => /^\d+$/.test(l));
      // Everything but the last screenful has left the screen and is in the file, in order.
      expect(numbers.length).toBeGreaterThan(1_000_000 - 45);
      expect(numbers[0]).toBe('1');
      expect(numbers[numbers.length - 1]).toBe(String(Number(numbers[0]) + numbers.length - 1));
      await closeAll(t);
    });

    it('returns the whole screen of full-screen programs (vi, less)', async () => {
      const tty = await openShell(t);
      await t.manager.type({ tty, expect: 'bash', text: 'seq 1 200 | less' });
      const less = reportOf(await t.manager.wait(10), tty);
      expect(less.fullScreen).toBe(true);
      expect(less.program).toBe('less');
      expect(less.text.split('\n').slice(0, 3)).toEqual(['1', '2', '3']);
      await t.manager.type({ tty, expect: 'less', text: 'q', enter: false });
      const back = reportOf(await t.manager.wait(10), tty);
      expect(back.fullScreen).toBe(false);

      // Its own file: the host and pty suites run in parallel on this machine, and a second vim on one file stops at the swap-file question.
      await t.manager.type({ tty, expect: 'bash', text: `vi /tmp/agent-kernel-vi-test-${process.pid}.txt` });
      const vi = reportOf(await t.manager.wait(10), tty);
      expect(vi.fullScreen).toBe(true);
      expect(vi.text).toMatch(/^~/m);
      await t.manager.type({ tty, expect: vi.program, text: 'ihello from vi', enter: false });
      const typed = reportOf(await t.manager.wait(10), tty);
      expect(typed.fullScreen).toBe(true);
      expect(typed.text.split('\n')[0]).toBe('hello from vi');
      await t.manager.type({ tty, expect: vi.program, text: 'Escape' });
      await t.manager.wait(5);
      await t.manager.type({ tty, expect: vi.program, text: ':q!' });
      const quit = reportOf(await t.manager.wait(10), tty);
      expect(quit.fullScreen, quit.text.slice(-200)).toBe(false);
      await closeAll(t);
    });

    it('drives a python REPL: returns at its prompt, pastes multi-line text', async () => {
      const tty = await openShell(t);
      await t.manager.type({ tty, expect: 'bash', text: 'python3 -q' });
      const started = await t.manager.wait(15);
      expect(started.reason).toBe('input');
      expect(reportOf(started, tty).text).toMatch(/>>> $/m);
      await t.manager.type({ tty, expect: 'python3', text: '6 * 7' });
      expect(reportOf(await t.manager.wait(10), tty).text).toMatch(/^42$/m);
      await t.manager.type({ tty, expect: 'python', text: 'def f(x):\n    return x + 1\n' });
      await t.manager.wait(10);
      await t.manager.type({ tty, expect: 'python3', text: '\n' });
      await t.manager.wait(10);
      await t.manager.type({ tty, expect: 'python3', text: 'f(99)' });
      expect(reportOf(await t.manager.wait(10), tty).text).toMatch(/^100$/m);
      await t.manager.type({ tty, expect: 'python3', text: 'C-d' });
      const exited = await t.manager.wait(10);
      expect(exited.open.find((o) => o.tty === tty)?.program).toBe('bash');
      await closeAll(t);
    });

    it('refuses to act before the agent has looked, and names what really runs', async () => {
      const a = await openShell(t);
      const b = await openShell(t);
      await t.manager.type({ tty: a, expect: 'bash', text: 'echo unseen-output' });
      const refused = await codeOf(
        (async () => {
          // Let the output arrive first.
          await new Promise((resolve) => setTimeout(resolve, 300));
          return t.manager.type({ tty: b, expect: 'bash', text: 'echo no' });
        })(),
      );
      expect(refused.code).toBe('UNSEEN_OUTPUT');
      expect(refused.message).toContain(`TTY ${a}`);
      expect(refused.message).toContain('wait()');
      expect(t.manager.hasUnseen()).toBe(true);
      expect(t.manager.unseenSummary()).toContain(`TTY ${a}`);
      expect(reportOf(await t.manager.wait(5), a).text).toContain('unseen-output');
      const mismatch = await codeOf(t.manager.type({ tty: b, expect: 'python3', text: 'print(1)' }));
      expect(mismatch.code).toBe('EXPECT_MISMATCH');
      expect(mismatch.message).toContain('running bash');
      await closeAll(t);
    });

    it('lets C-c stop a runaway loop whose output never stops arriving, but not typing text into it', async () => {
      const tty = await openShell(t);
      await t.manager.type({ tty, expect: 'bash', text: 'while :; do echo tick; done' });
      await t.manager.wait(0.5);
      await expect.poll(() => t.manager.list().find((info) => info.tty === tty)?.unseenLines ?? 0).toBeGreaterThan(0);
      expect((await codeOf(t.manager.type({ tty, expect: 'bash', text: 'echo no' }))).code).toBe('UNSEEN_OUTPUT');
      await t.manager.type({ tty, expect: 'bash', text: 'C-c' });
      const stopped = await t.manager.wait(10);
      expect(reportOf(stopped, tty).exitCode).toBe(130);
      expect(reportOf(await run(t, tty, 'echo after-the-loop'), tty).text).toContain('after-the-loop');
    });

    it('serves type and wait called together (wait first), and an aborted wait marks nothing seen', async () => {
      const tty = await openShell(t);
      const [result] = await Promise.all([t.manager.wait(10), t.manager.type({ tty, expect: 'bash', text: 'echo together' })]);
      expect(result.reason).toBe('command-finished');
      expect(reportOf(result, tty).text).toContain('together');

      await t.manager.type({ tty, expect: 'bash', text: 'sleep 0.3; echo after-abort; sleep 30' });
      const controller = new AbortController();
      const aborted = t.manager.wait(20, controller.signal);
      await expect.poll(() => t.manager.hasUnseen()).toBe(true);
      await expect.poll(() => t.manager.list()[0]?.unseenLines ?? 0).toBeGreaterThanOrEqual(2);
      controller.abort();
      await expect(aborted).rejects.toThrow();
      expect(t.manager.hasUnseen()).toBe(true);
      const seen = await t.manager.wait(1);
      expect(reportOf(seen, tty).text).toContain('after-abort');
      await t.manager.type({ tty, expect: 'sleep', text: 'C-c' });
      await t.manager.wait(5);
    });

    it('answers bad input clearly', async () => {
      const tty = await openShell(t);
      for (const bad of [20, -1, 1.5]) {
        const error = await codeOf(t.manager.type({ tty: bad, expect: 'bash', text: 'ls' }));
        expect(error.code).toBe('TTY_OUT_OF_RANGE');
        expect(error.message).toContain('0 to 19');
      }
      const closed = await codeOf(t.manager.type({ tty: 7, expect: 'bash', text: 'ls' }));
      expect(closed.code).toBe('TTY_NOT_FOUND');
      expect(closed.message).toContain(`open: ${tty}`);
      for (const key of ['C-q1', 'F13', 'M-x']) {
        const error = await codeOf(t.manager.type({ tty, expect: 'bash', text: key }));
        expect(error.code).toBe('UNKNOWN_KEY');
        expect(error.message).toContain('F1-F12');
      }
      const long = await codeOf(t.manager.type({ tty, expect: 'bash', text: 'x'.repeat(16_385) }));
      expect(long.code).toBe('TEXT_TOO_LONG');
      expect(long.message).toContain('16384');
      // Literal text that starts with "-" or is a word is text, not an option or a key.
      const dash = reportOf(await run(t, tty, '-n is not an option; echo "Enter" -l'), tty);
      expect(dash.text).toContain('Enter -l');
      await closeAll(t);
      expect((await codeOf(t.manager.close(tty))).code).toBe('TTY_NOT_FOUND');
    });

    it('opens the number and working directory asked for, and refuses a number already open', async () => {
      const { tty } = await t.manager.open({ tty: 3, cwd: '/tmp' });
      expect(tty).toBe(3);
      await waitFor(t.manager, 3, (text) => /[#$] $/m.test(text));
      expect(reportOf(await run(t, 3, 'pwd'), 3).text.split('\n')).toContain('/tmp');
      // The lowest free number is still 0; a relative cwd is under the data directory.
      await t.sandbox.run(['mkdir', '-p', `${t.test.dataDir}/work`]);
      expect((await t.manager.open({ cwd: 'work', command: 'pwd; sleep 30' })).tty).toBe(0);
      expect(await waitFor(t.manager, 0, (text) => text.includes('/work'))).toContain(`${t.test.dataDir}/work`);
      const taken = await codeOf(t.manager.open({ tty: 3 }));
      expect(taken.code).toBe('TTY_IN_USE');
      expect(taken.message).toContain('TTY 3 is already open');
      expect((await codeOf(t.manager.open({ tty: 20 }))).code).toBe('TTY_OUT_OF_RANGE');
      const missing = await codeOf(t.manager.open({ tty: 5, cwd: '/no/such/dir' }));
      expect(missing.code).toBe('USAGE');
      expect(missing.message).toContain('/no/such/dir does not exist');
      expect(t.manager.list().map((i) => i.tty)).toEqual([0, 3]);
    });

    it('reports a terminal whose program ended, with its status, then closes and archives it', async () => {
      const { tty } = await t.manager.open({ command: `sh -c 'echo last words; exit 3'` });
      // On a loaded machine a wait may first report the output settled and only the next one the exit.
      let text = '';
      let report: ReturnType<typeof reportOf> | undefined;
      for (let attempt = 0; attempt < 5 && !report; attempt++) {
        const seen = (await t.manager.wait(10)).changed.find((r) => r.tty === tty);
        text += seen?.text ?? '';
        if (seen && !seen.alive) report = seen;
      }
      expect(report?.exitCode).toBe(3);
      expect(text).toContain('last words');
      if (!report) return;
      expect(report.archivedTo).toBeDefined();
      expect(await readFile(hostView(t.test.instance.paths, report.archivedTo!), 'utf8')).toContain('last words');
      expect(t.manager.list().find((i) => i.tty === tty)).toBeUndefined();
    });

    it('ends a terminal on its own exit announcement only: the same bytes from a program (another key) end nothing', async () => {
      const forged = (status: number) => `printf '\\033]7133;0123456789abcdef;${status}\\007'`;
      const shell = await openShell(t);
      await t.manager.type({ tty: shell, expect: 'bash', text: `${forged(7)}; echo still-here` });
      const { tty: command } = await t.manager.open({ command: `sh -c "${forged(9).replace(/"/g, '\\"')}; echo forged-sent; sleep 1; exit 2"` });
      const ended = new Map<number, number | undefined>();
      let text = '';
      for (let attempt = 0; attempt < 10 && !ended.has(command); attempt++) {
        const result = await t.manager.wait(10);
        for (const r of result.changed) {
          text += r.text;
          if (!r.alive) ended.set(r.tty, r.exitCode);
        }
      }
      expect(text).toContain('forged-sent');
      expect(text).toContain('still-here');
      expect(ended.get(command)).toBe(2);
      expect(ended.has(shell)).toBe(false);
      expect(reportOf(await run(t, shell, 'exit 4'), shell)).toMatchObject({ alive: false, exitCode: 4 });
    });

    it('close ends background jobs that ignore SIGHUP and archives the scrollback', async () => {
      const tty = await openShell(t);
      // Numbers of this run's own: the host and pty suites run at once on this machine and see each other's processes.
      const seconds = 4000 + Math.floor(Math.random() * 900);
      await run(t, tty, `(trap '' HUP; exec sleep ${seconds}) & echo started-job`);
      const result = await t.manager.close(tty);
      expect(result.archivedTo).toMatch(/tty_\d+-tick-000$/);
      expect(await readFile(hostView(t.test.instance.paths, result.archivedTo), 'utf8')).toContain('started-job');
      const left = await t.sandbox.run(['sh', '-c', `ps -eo args | grep -c "^sleep ${seconds}$" || true`]);
      expect(left.stdout.trim()).toBe('0');
    });

    it('wait names background jobs still running under an idle shell, briefly', async () => {
      const tty = await openShell(t);
      const report = reportOf(await run(t, tty, 'sleep 4545 & echo job-started'), tty);
      expect(report.text).toContain('job-started');
      expect(report.text).toMatch(/still running in the background: sleep \(pid \d+, \d+ MB\)/);
      // The runner's pre-stop check reads them from the registry.
      const registry = JSON.parse(await readFile(t.test.instance.paths.sessionRegistry, 'utf8')) as { ttys: Array<{ tty: number; background?: string[] }> };
      expect(registry.ttys.find((r) => r.tty === tty)?.background?.[0]).toMatch(/^sleep \(pid/);
      await run(t, tty, 'kill %1; wait');
      expect(reportOf(await run(t, tty, 'echo quiet-now'), tty).text).not.toContain('background');
    });

    it('close ends processes that left the terminal with setsid, even re-parented daemons, and says what it ended', async () => {
      const tty = await openShell(t);
      // One in its own session; one daemonized twice over (its parent exits, init adopts it).
      const seconds = 5000 + 2 * Math.floor(Math.random() * 450);
      await run(t, tty, `setsid sleep ${seconds} & (setsid sh -c 'sleep ${seconds + 1} & exit' &) ; sleep 0.3; echo spawned`);
      const result = await t.manager.close(tty);
      const names = (result.ended ?? []).map((p) => p.name);
      expect(names).toContain('bash');
      expect(names.filter((n) => n === 'sleep').length).toBeGreaterThanOrEqual(2);
      const left = await t.sandbox.run(['sh', '-c', `ps -eo args | grep -cE "^sleep (${seconds}|${seconds + 1})$" || true`]);
      expect(left.stdout.trim()).toBe('0');
    });

    it('resizes one terminal (120x40 by default)', async () => {
      const tty = await openShell(t);
      expect(reportOf(await run(t, tty, 'stty size'), tty).text).toContain('40 120');
      const info = await t.manager.resize(tty, 80, 20);
      expect(info).toMatchObject({ tty, cols: 80, rows: 20 });
      await t.manager.wait(2);
      expect(reportOf(await run(t, tty, 'stty size'), tty).text).toContain('20 80');
      expect((await codeOf(t.manager.resize(tty, 5, 5))).code).toBe('USAGE');
    });

    it('keeps per-terminal files and the registry current', async () => {
      const tty = await openShell(t);
      await run(t, tty, 'echo file-check');
      const dir = t.test.instance.paths.tty(tty);
      await expect.poll(async () => readFile(`${dir}/screen`, 'utf8').catch(() => '')).toContain('file-check');
      const status = JSON.parse(await readFile(`${dir}/status`, 'utf8')) as Record<string, unknown>;
      expect(status).toMatchObject({ tty, program: 'bash', alive: true, unseen: false });
      expect(await readFile(`${dir}/raw`, 'utf8')).toContain('file-check');
      expect((await stat(`${dir}/screen.ansi`)).size).toBeGreaterThan(0);
      const registry = JSON.parse(await readFile(t.test.instance.paths.sessionRegistry, 'utf8')) as { ttys: Array<{ tty: number }> };
      expect(registry.ttys.map((r) => r.tty)).toContain(tty);
      await closeAll(t);
      const after = JSON.parse(await readFile(t.test.instance.paths.sessionRegistry, 'utf8')) as { ttys: unknown[] };
      expect(after.ttys).toEqual([]);
    });

    it('runs 20 terminals printing at once, and refuses a 21st', async () => {
      // Commands given to open() start at once (type() would need a wait() between terminals).
      const opened: number[] = [];
      for (let i = 0; i < 20; i++) opened.push((await t.manager.open({ command: `sh -c "sleep 2; seq 1 3000 | sed s/^/t${i}-/"` })).tty);
      expect(opened).toEqual(Array.from({ length: 20 }, (_, i) => i));
      const full = await codeOf(t.manager.open());
      expect(full.code).toBe('TTY_CAPACITY');
      expect(full.message).toContain('close(tty)');
      const shown = new Map<number, string>();
      const ended = new Set<number>();
      const until = Date.now() + 60_000;
      while (ended.size < 20 && Date.now() < until) {
        const result = await t.manager.wait(30);
        for (const r of result.changed) {
          shown.set(r.tty, `${shown.get(r.tty) ?? ''}${r.text}\n`);
          if (r.alive) continue;
          // Each ended with status 0 and was closed; all it printed was shown, last line included.
          expect(r.exitCode).toBe(0);
          expect(shown.get(r.tty), `TTY ${r.tty}`).toContain(`t${r.tty}-3000\n`);
          ended.add(r.tty);
        }
      }
      for (const tty of opened) {
        const archive = await readFile(`${t.test.instance.paths.sessionArchive}/tty_${tty}-tick-000`, 'utf8');
        expect(archive.split('\n').filter((l) => l.startsWith(`t${tty}-`))).toHaveLength(3000);
      }
      const seen = ended;
      expect([...seen.keys()].sort((a, b) => a - b)).toEqual(opened);
      expect(t.manager.list()).toEqual([]);
    });

    it.runIf(persistent)('re-adopts terminals after a restart and shows exactly what was printed meanwhile', async () => {
      const tty = await openShell(t);
      await run(t, tty, 'echo before-restart');
      await t.manager.dispose();
      // While no server is attached: a command prints (started through tmux directly).
      const socket = tmuxSocketName(t.sandbox, t.test.name);
      await t.sandbox.run(tmuxArgv(socket, 'send-keys', '-t', `kernel:${tty}`, '-l', 'for i in 1 2 3; do echo detached-$i; done'), { env: { TMUX: '' } });
      await t.sandbox.run(tmuxArgv(socket, 'send-keys', '-t', `kernel:${tty}`, 'Enter'), { env: { TMUX: '' } });
      await expect
        .poll(async () => (await t.sandbox.run(tmuxArgv(socket, 'capture-pane', '-p', '-t', `kernel:${tty}`), { env: { TMUX: '' } })).stdout)
        .toMatch(/detached-3\n.*[#$]\s*$/);
      const manager = await t.restart();
      expect(manager.adoptReport.adopted).toContain(tty);
      expect(manager.hasUnseen()).toBe(true);
      const report = reportOf(await manager.wait(5), tty);
      const lines = report.text.split('\n');
      expect(lines.filter((l) => l.startsWith('detached-'))).toEqual(['detached-1', 'detached-2', 'detached-3']);
      expect(report.text).not.toContain('before-restart');
      // Nothing new: a second restart reports nothing.
      await manager.dispose();
      const again = await t.restart();
      expect(again.hasUnseen()).toBe(false);

      // Much more than the emulator keeps, printed while detached: counted and shown exactly.
      await again.dispose();
      await t.sandbox.run(tmuxArgv(socket, 'send-keys', '-t', `kernel:${tty}`, '-l', 'seq 1 5000'), { env: { TMUX: '' } });
      await t.sandbox.run(tmuxArgv(socket, 'send-keys', '-t', `kernel:${tty}`, 'Enter'), { env: { TMUX: '' } });
      await expect
        .poll(async () => (await t.sandbox.run(tmuxArgv(socket, 'capture-pane', '-p', '-t', `kernel:${tty}`), { env: { TMUX: '' } })).stdout)
        .toMatch(/\n5000\n.*[#$]\s*$/);
      const big = reportOf(await (await t.restart()).wait(5), tty);
      expect(big.totalLines).toBe(5002);
      const shown = big.text.split('\n');
      expect(shown[0]).toMatch(/seq 1 5000$/);
      expect(shown.slice(1, 10)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
      expect(shown.slice(-2)[0]).toBe('5000');
      expect(big.elidedLines).toBe(5002 - 20);
      await closeAll(t);
    });

    it.runIf(persistent)('after SIGKILL of the server while a command prints, the next server reports exactly the lines printed meanwhile', async () => {
      const tty = await openShell(t);
      await t.manager.dispose();
      const child = await startManagerChild(t.test.name, t.test.dataDir);
      let first: WaitResult;
      try {
        await child.call('type', { tty, expect: 'bash', text: 'for i in $(seq 1 40); do echo "line-$i"; sleep 0.1; done' });
        // Half a second: a few lines, well under the 20 shown whole.
        first = await child.call<WaitResult>('wait', 0.5);
      } finally {
        await child.kill();
      }
      expect(first.reason).toBe('timeout');
      const numbers = (text: string) => text.split('\n').filter((l) => /^line-\d+$/.test(l)).map((l) => Number(l.slice(5)));
      const seen = numbers(reportOf(first, tty).text);
      const k = seen.length;
      expect(seen).toEqual(Array.from({ length: k }, (_, i) => i + 1));
      expect(k).toBeLessThan(40);

      // The next server: what was printed after the crash, exactly, and nothing the agent saw.
      const second = reportOf(await (await t.restart()).wait(30), tty);
      const [head = '', tail = ''] = second.text.split(/\n… .* left out .*…\n/);
      const headNumbers = numbers(head);
      const tailNumbers = numbers(tail);
      expect(headNumbers[0]).toBe(k + 1);
      expect(headNumbers).toEqual(Array.from({ length: headNumbers.length }, (_, i) => k + 1 + i));
      expect(tailNumbers[tailNumbers.length - 1] ?? headNumbers[headNumbers.length - 1]).toBe(40);
      // Every line from k+1 to 40, plus the new prompt.
      expect(second.totalLines).toBe(40 - k + 1);
      const scrollback = await readFile(hostView(t.test.instance.paths, second.files.scrollback), 'utf8');
      const screen = await readFile(hostView(t.test.instance.paths, second.files.screen), 'utf8');
      expect(numbers(`${scrollback}\n${screen}`)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    });

    it('refuses a second server on the same instance, naming the PID that holds it', async () => {
      const error = await codeOf(TtyManager.start({ instance: t.test.instance, sandbox: t.sandbox, logger: (await import('../../../src/log/logger.js')).silentLogger() }));
      expect(error.code).toBe('INSTANCE_LOCKED');
      expect(error.message).toContain(`PID ${process.pid}`);
    });

    it.runIf(backend === 'docker')('reports terminals lost after a real container restart', async () => {
      const tty = await openShell(t);
      await run(t, tty, 'echo before-the-restart');
      await t.manager.dispose();
      const engine = await connectEngine();
      await engine.docker.getContainer(containerName(t.test.name)).restart({ t: 1 });
      const manager = await t.restart();
      expect(manager.adoptReport.lost).toEqual([expect.objectContaining({ tty, command: 'bash' })]);
      expect(await readFile(hostView(t.test.instance.paths, manager.adoptReport.lost[0]!.scrollbackPrev), 'utf8')).toContain('before-the-restart');
      // The instance works again: a new terminal on the same number.
      expect((await manager.open()).tty).toBe(tty);
    });

    it.runIf(!persistent)('says its terminals are not persistent, ends them with the server, and reports them lost to the next', async () => {
      expect(t.manager.adoptReport.persistent).toBe(false);
      const tty = await openShell(t);
      await run(t, tty, 'echo remember-me; echo $$ > shell.pid');
      const pid = Number((await readFile(`${t.test.dataDir}/shell.pid`, 'utf8')).trim());
      expect((await t.sandbox.run(['kill', '-0', String(pid)])).exitCode).toBe(0);
      await t.manager.dispose();
      await expect.poll(async () => (await t.sandbox.run(['kill', '-0', String(pid)])).exitCode, { timeout: 10_000 }).not.toBe(0);
      const manager = await t.restart();
      expect(manager.adoptReport).toMatchObject({ adopted: [], persistent: false, lost: [{ tty, command: 'bash' }] });
      expect(await readFile(hostView(t.test.instance.paths, manager.adoptReport.lost[0]!.scrollbackPrev), 'utf8')).toContain('remember-me');
      expect((await manager.open()).tty).toBe(tty);
    });

    it.runIf(persistent)('reports terminals lost when tmux went away (container restart), keeping their scrollback', async () => {
      const tty = await openShell(t);
      await run(t, tty, 'echo remember-me');
      await t.manager.dispose();
      const socket = tmuxSocketName(t.sandbox, t.test.name);
      await t.sandbox.run(tmuxArgv(socket, 'kill-server'), { env: { TMUX: '' } });
      const manager = await t.restart();
      expect(manager.adoptReport.adopted).toEqual([]);
      expect(manager.adoptReport.lost.map((l) => l.tty)).toEqual([tty]);
      const prev = manager.adoptReport.lost[0]!.scrollbackPrev;
      expect(prev.endsWith('scrollback.prev')).toBe(true);
      expect(await readFile(hostView(t.test.instance.paths, prev), 'utf8')).toContain('remember-me');
      expect(manager.list()).toEqual([]);
      expect(await readdir(t.test.instance.paths.tty(tty))).toContain('scrollback.prev');
    });
  });
}
