import { readFile, readdir, stat } from 'node:fs/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { containerName } from '../../../src/sandbox/container/container.js';
import { connectEngine } from '../../../src/sandbox/engine/engine.js';
import { TtyManager } from '../../../src/tty/tty-manager.js';
import { tmuxArgv, tmuxSocketName } from '../../../src/tty/host/tmux-server.js';
import type { WaitResult } from '../../../src/tty/api/types.js';
import { startManagerChild } from './helpers/manager-child.js';
import { type Backend, type Terminals, reportOf } from './helpers/terminals.js';
import { hostView } from '../../../src/config/paths.js';
import { closeAll, codeOf, expectFinished, openShell, restartMidCommand, run } from './helpers/suite-steps.js';

/** Terminal tests of how terminals end, close, keep files and survive restarts. */
export function terminalLifecycleTests(use: () => Terminals, backend: Backend): void {
  // PTYs of the server (no tmux) end with it: nothing to re-adopt.
  const persistent = backend !== 'pty';
  describe('lifecycle', () => {
    let t: Terminals;
    beforeEach(() => {
      t = use();
    });

    it('reports a terminal whose program ended, with its status, then closes and archives it', async () => {
      const { tty } = await t.manager.open({ command: `sh -c 'echo last words; exit 3'` });
      // On a loaded machine a wait may first report the output settled and only the next one the exit.
      let text = '';
      let report: ReturnType<typeof reportOf> | undefined;
      for (let attempt = 0; attempt < 5 && !report; attempt++) {
        const seen = (await t.manager.wait({ timeoutMs: 10_000 })).changed.find((r) => r.tty === tty);
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
        const result = await t.manager.wait({ timeoutMs: 10_000 });
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
      // Earlier tests of the suite closed this number in the same tick: a later part, never one written over.
      expect(result.archivedTo).toMatch(/tty_\d+-tick-000(-\d+)?$/);
      expect(await readFile(hostView(t.test.instance.paths, result.archivedTo), 'utf8')).toContain('started-job');
      const left = await t.sandbox.run(['sh', '-c', `ps -eo args | grep -c "^sleep ${seconds}$" || true`]);
      expect(left.stdout.trim()).toBe('0');
    });

    it('keeps both archives of a terminal number closed twice in one tick', async () => {
      const archives: string[] = [];
      for (const life of ['first-life', 'second-life']) {
        const tty = await openShell(t);
        await run(t, tty, `echo ${life}`);
        archives.push((await t.manager.close(tty)).archivedTo);
      }
      // openShell takes the lowest free number: the same one both times, so the second archive is a later part.
      expect(archives[1]).toMatch(/tty_\d+-tick-000-\d+$/);
      expect(archives[1]).not.toBe(archives[0]);
      expect(await readFile(hostView(t.test.instance.paths, archives[0]!), 'utf8')).toContain('first-life');
      expect(await readFile(hostView(t.test.instance.paths, archives[1]!), 'utf8')).toContain('second-life');
    });

    it('wait names background jobs still running under an idle shell, briefly', async () => {
      const tty = await openShell(t);
      const report = reportOf(await run(t, tty, 'sleep 4545 & echo job-started'), tty);
      expect(report.text).toContain('job-started');
      expect(report.text).toMatch(/still running in the background: sleep \(pid \d+, \d+ MB\)/);
      // The runner's pre-stop check reads them from the registry.
      const registry = JSON.parse(await readFile(t.test.instance.paths.terminalRegistry, 'utf8')) as { ttys: Array<{ tty: number; background?: string[] }> };
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

    it('close ends a process that named itself with a newline and forged /proc fields (it hid from a line-by-line reader)', async () => {
      const tty = await openShell(t);
      const tag = `ak${1000 + Math.floor(Math.random() * 9000)}`;
      await run(t, tty, `(setsid sh -c 'printf "${tag}\\n9 (z) S" > /proc/self/comm; while :; do sleep 600; done' &) ; sleep 0.3; echo spawned`);
      // Living ones: a killed process stays a zombie until whoever adopted it reaps it.
      const script = `for p in /proc/[0-9]*; do grep -q -F ${tag} $p/comm 2>/dev/null && ! grep -q '^State:.Z' $p/status 2>/dev/null && echo $p; done | wc -l`;
      const count = async () => (await t.sandbox.run(['sh', '-c', script])).stdout.trim();
      expect(await count()).toBe('1');
      const result = await t.manager.close(tty);
      expect((result.ended ?? []).map((p) => p.name)).toContain(`${tag}\n9 (z) S`);
      expect(await count()).toBe('0');
    });

    it('resizes one terminal (120x40 by default)', async () => {
      const tty = await openShell(t);
      expect(reportOf(await run(t, tty, 'stty size'), tty).text).toContain('40 120');
      const info = await t.manager.resize(tty, 80, 20);
      expect(info).toMatchObject({ tty, cols: 80, rows: 20 });
      await t.manager.wait({ timeoutMs: 2000 });
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
      const registry = JSON.parse(await readFile(t.test.instance.paths.terminalRegistry, 'utf8')) as { ttys: Array<{ tty: number }> };
      expect(registry.ttys.map((r) => r.tty)).toContain(tty);
      await closeAll(t);
      const after = JSON.parse(await readFile(t.test.instance.paths.terminalRegistry, 'utf8')) as { ttys: unknown[] };
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
      const archives = new Map<number, string>();
      const ended = new Set<number>();
      const until = Date.now() + 60_000;
      while (ended.size < 20 && Date.now() < until) {
        const result = await t.manager.wait({ timeoutMs: 30_000 });
        for (const r of result.changed) {
          shown.set(r.tty, `${shown.get(r.tty) ?? ''}${r.text}\n`);
          if (r.alive) continue;
          // Each ended with status 0 and was closed; all it printed was shown, last line included.
          expect(r.exitCode).toBe(0);
          expect(shown.get(r.tty), `TTY ${r.tty}`).toContain(`t${r.tty}-3000\n`);
          archives.set(r.tty, r.archivedTo ?? '');
          ended.add(r.tty);
        }
      }
      for (const tty of opened) {
        const archive = await readFile(hostView(t.test.instance.paths, archives.get(tty) ?? ''), 'utf8');
        expect(archive.split('\n').filter((l) => l.startsWith(`t${tty}-`))).toHaveLength(3000);
      }
      const seen = ended;
      expect([...seen.keys()].sort((a, b) => a - b)).toEqual(opened);
      expect(t.manager.list()).toEqual([]);
    });

    // retry: 2 for an open bug, not for timing (issue 36's note, 2026-12-06): under load (6 busy loops, 2 of 4 runs; once
    // in CI, and on the code before this session's merges alike) the next server adopts the terminal with the command
    // resumed (sleep in the foreground, the start saved) and then never reports the end mark the shell prints after it.
    it.runIf(persistent)('reports the end and exit status of a command that a former server saw start', { retry: 2 }, async () => {
      const { tty, manager } = await restartMidCommand(t, 'sleep 3; echo slept-$((6*7)); (exit 7)', { seconds: 1, reason: 'timeout' });
      let result = await manager.wait({ timeoutMs: 10_000 });
      for (const until = Date.now() + 15_000; result.reason !== 'command-finished' && Date.now() < until; ) result = await manager.wait({ timeoutMs: 10_000 });
      // Timed by when the server read each mark: a few ms either way.
      expect(expectFinished(result, tty, 7).durationMs).toBeGreaterThanOrEqual(2900);
      // A shell at its prompt after a restart is not taken for a running command.
      await manager.dispose();
      const again = await t.restart();
      await again.type({ tty, expect: 'bash', text: 'echo after-$((6*7))' });
      expectFinished(await again.wait({ timeoutMs: 10_000 }), tty, 0, 'after-42');
    });

    it.runIf(persistent)('reports the exit status and duration of a command that ended while no server was attached', async () => {
      // Its end mark is printed to no one while no server is attached: only the shell's title is left to tell.
      const { tty, manager } = await restartMidCommand(t, 'sleep 2; echo slept-$((6*7)); (exit 9)', { seconds: 1, reason: 'timeout', gapMs: 3000 });
      const report = expectFinished(await manager.wait({ timeoutMs: 10_000 }), tty, 9, 'slept-42');
      // When it ended, not when this server found out.
      expect(report.durationMs).toBeGreaterThanOrEqual(1900);
      expect(report.durationMs).toBeLessThan(3000);
      expect((await manager.wait({ timeoutMs: 500 })).reason).toBe('idle');
    });

    it.runIf(persistent)('is not told a command ended by a title the command printed (another key, separators, control bytes)', async () => {
      // What a file or a web page could carry: a title shaped like the shell's, with a key that is not the terminal's.
      // The first server lists the pane under a title with separators; the next adopts it under one well formed.
      const titles = String.raw`printf '\033]2;ak-x|9\037%s\n\007'; sleep 1.5; printf '\033]2;ak-deadbeef-0-1999999999999999\007'`;
      const { tty, manager } = await restartMidCommand(t, `${titles}; sleep 2.5; (exit 5)`, { seconds: 1, reason: 'timeout', gapMs: 1500 });
      let result = await manager.wait({ timeoutMs: 10_000 });
      for (const until = Date.now() + 15_000; result.reason !== 'command-finished' && Date.now() < until; ) result = await manager.wait({ timeoutMs: 10_000 });
      expect(expectFinished(result, tty, 5).durationMs).toBeGreaterThanOrEqual(3900);
    });

    it.runIf(persistent)('goes on waiting for a shell builtin that a former server saw start, and reports its end', async () => {
      const { tty, manager } = await restartMidCommand(t, 'read -r answer; echo got-$answer; (exit 4)', { seconds: 5, reason: 'input' });
      await manager.wait({ timeoutMs: 500 });
      // The shell is in the foreground, yet the command it runs has not ended.
      await manager.type({ tty, expect: 'bash', text: 'yes' });
      expectFinished(await manager.wait({ timeoutMs: 10_000 }), tty, 4, 'got-yes');
    });

    it.runIf(persistent)('still takes shell marks a command prints as forged after a restart, before its shell signs one again', async () => {
      const tty = await openShell(t);
      await run(t, tty, 'echo signed-before');
      // Printed after the next server has adopted the terminal, while the command still runs.
      const forged = String.raw`sleep 4; printf 'x\033]133;D;0\007\033]133;A\007$ \033]133;B\007'; sleep 2; echo done-$((6*7))`;
      await t.manager.type({ tty, expect: 'bash', text: forged });
      await t.manager.dispose();
      const manager = await t.restart();
      let seen = '';
      let first: string | undefined;
      for (const until = Date.now() + 20_000; !seen.includes('done-42') && Date.now() < until; ) {
        const text = (await manager.wait({ timeoutMs: 10_000 })).changed.find((r) => r.tty === tty)?.text ?? '';
        seen += text;
        if (first === undefined && text.includes('x$')) first = text;
      }
      // Fooled, wait returned at the forged prompt, 2 s before the command ended.
      expect(first).toContain('done-42');
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
      const report = reportOf(await manager.wait({ timeoutMs: 5000 }), tty);
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
      const big = reportOf(await (await t.restart()).wait({ timeoutMs: 5000 }), tty);
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
        first = await child.call<WaitResult>('wait', { timeoutMs: 500 });
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
      const second = reportOf(await (await t.restart()).wait({ timeoutMs: 30_000 }), tty);
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
