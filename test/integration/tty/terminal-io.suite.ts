import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type Terminals, reportOf, waitFor } from './helpers/terminals.js';
import { hostView } from '../../../src/config/paths.js';
import { sleep } from '../../../src/util/sleep.js';
import type { TerminalHost } from '../../../src/tty/host/terminal-host.js';
import { closeAll, codeOf, openShell, run } from './helpers/suite-steps.js';

/** Terminal tests of what goes in and comes out: commands, screens, REPLs, refusals, bad input. */
export function terminalIoTests(use: () => Terminals): void {
  describe('input and output', () => {
    let t: Terminals;
    beforeEach(() => {
      t = use();
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
      const interrupted = await t.manager.wait({ timeoutMs: 10_000 });
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

    // Retried: in the full suite on 2 cores (other files' containers beside it) tmux now and then reads on past three
    // pauses (`held` stayed false in both full runs of 2026-12-06, at load 5-20; alone it passes every time).
    it('stops reading while the emulators are behind: the program waits on its terminal, and nothing is lost', { retry: 2 }, async () => {
      const tty = await openShell(t);
      // The manager throttles its host when an emulator is 2 MB behind (output-backpressure.ts); here the test does,
      // with the manager's own calls held off (under load it would release the host in the middle of the test).
      const host = (t.manager as unknown as { ctx: { host: TerminalHost } }).ctx.host;
      const throttle = host.throttle.bind(host);
      host.throttle = () => undefined;
      let bytes = 0;
      const subscription = t.manager.events.onOutput((e) => {
        if (e.tty === tty) bytes += e.data.length;
      });
      // What seq has written so far (it writes only to its terminal), read where it runs. Its own name: the
      // host and pty suites run at once on this machine, and the container's processes show in its /proc too.
      const name = `akf${100_000 + Math.floor(Math.random() * 900_000)}`;
      const script = `for p in /proc/[0-9]*; do [ "$(head -c ${name.length + 1} $p/cmdline 2>/dev/null | tr '\\0' ' ')" = '${name} ' ] && sed -n 's/^wchar: //p' $p/io; done`;
      const written = async () => Number((await t.sandbox.run(['sh', '-c', script])).stdout.trim() || NaN);
      try {
        await t.manager.type({ tty, expect: 'bash', text: `bash -c 'exec -a ${name} seq 1 100000000'` });
        await expect.poll(async () => (await written()) > 100_000, { timeout: 10_000 }).toBe(true);
        // tmux 3.3 now and then reads on into its own memory while its client is paused (NUDGE_MS in
        // control-client.ts): the program must be held back within three pauses.
        let held = false;
        for (let pause = 0; pause < 3 && !held; pause++) {
          throttle(true);
          try {
            // What is already in pipes and buffers on the way drains first (seq still for three looks); then seq
            // waits on its terminal, writing nothing for six more looks (0.9 s), while the server takes a trickle
            // at most (unthrottled, this is megabytes a second).
            let last = await written();
            let still = 0;
            let drained: number | undefined;
            for (const until = Date.now() + 8_000; still < 9 && Date.now() < until; ) {
              await sleep(150);
              const now = await written();
              still = now === last ? still + 1 : 0;
              if (still === 3) drained = bytes;
              last = now;
            }
            held = still >= 9;
            if (drained !== undefined) expect(bytes - drained).toBeLessThan(1024 * 1024);
          } finally {
            throttle(false);
          }
          if (!held) await sleep(200);
        }
        expect(held).toBe(true);
        const resumed = bytes;
        await expect.poll(() => bytes > resumed + 500_000, { timeout: 10_000 }).toBe(true);
        subscription.dispose();
        await t.manager.type({ tty, expect: 'bash', text: 'C-c' });
        let done = await t.manager.wait({ timeoutMs: 20_000 });
        for (const until = Date.now() + 60_000; done.reason !== 'command-finished' && Date.now() < until; ) done = await t.manager.wait({ timeoutMs: 20_000 });
        expect(done.reason).toBe('command-finished');
        const scrollback = await readFile(hostView(t.test.instance.paths, reportOf(done, tty).files.scrollback), 'utf8');
        const numbers = scrollback.split('\n').filter((l) => /^\d+$/.test(l));
        // Every line in order, across the pause (from 1, unless the file was rotated at tty.scrollback_max_bytes).
        const file = hostView(t.test.instance.paths, reportOf(done, tty).files.scrollback);
        if (numbers[0] !== '1') expect((await readdir(path.dirname(file))).some((f) => /^scrollback\.\d+$/.test(f))).toBe(true);
        expect(numbers.every((n, i) => i === 0 || Number(n) === Number(numbers[i - 1]) + 1)).toBe(true);
      } finally {
        delete (host as Partial<TerminalHost>).throttle;
        subscription.dispose();
        await closeAll(t);
      }
    });

    it('is not fooled by shell marks in what a command prints (a file, a web page)', async () => {
      const tty = await openShell(t);
      const forged = String.raw`printf 'x\033]133;D;0\007\033]133;A\007$ \033]133;B\007'; sleep 2; echo done-$((6*7))`;
      const result = await run(t, tty, forged);
      expect(result.reason).toBe('command-finished');
      expect(reportOf(result, tty).text).toContain('done-42');
      await closeAll(t);
    });

    it('returns the whole screen of full-screen programs (vi, less)', async () => {
      const tty = await openShell(t);
      await t.manager.type({ tty, expect: 'bash', text: 'seq 1 200 | less' });
      const less = reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty);
      expect(less.fullScreen).toBe(true);
      expect(less.program).toBe('less');
      expect(less.text.split('\n').slice(0, 3)).toEqual(['1', '2', '3']);
      await t.manager.type({ tty, expect: 'less', text: 'q', enter: false });
      const back = reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty);
      expect(back.fullScreen).toBe(false);
      // A pager whose input is still being written (seq waits on the full pipe) asks for keys at once, as less;
      // the pipeline's first command may be named too.
      await t.manager.type({ tty, expect: 'bash', text: 'seq 1 1000000 | less' });
      const paging = await t.manager.wait({ timeoutMs: 10_000 });
      expect(paging.reason).toBe('input');
      expect(reportOf(paging, tty).program).toBe('less');
      await t.manager.type({ tty, expect: 'seq', text: 'G', enter: false });
      expect(reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty).text).toMatch(/^1000000$/m);
      await t.manager.type({ tty, expect: 'less', text: 'q', enter: false });
      expect(reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty).fullScreen).toBe(false);

      // Its own file: the host and pty suites run in parallel on this machine, and a second vim on one file stops at the swap-file question.
      await t.manager.type({ tty, expect: 'bash', text: `vi /tmp/agent-kernel-vi-test-${process.pid}.txt` });
      const vi = reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty);
      expect(vi.fullScreen).toBe(true);
      expect(vi.text).toMatch(/^~/m);
      await t.manager.type({ tty, expect: vi.program, text: 'ihello from vi', enter: false });
      const typed = reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty);
      expect(typed.fullScreen).toBe(true);
      expect(typed.text.split('\n')[0]).toBe('hello from vi');
      await t.manager.type({ tty, expect: vi.program, text: 'Escape' });
      await t.manager.wait({ timeoutMs: 5000 });
      await t.manager.type({ tty, expect: vi.program, text: ':q!' });
      const quit = reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty);
      expect(quit.fullScreen, quit.text.slice(-200)).toBe(false);
      await closeAll(t);
    });

    it('drives a python REPL: returns at its prompt, pastes multi-line text', async () => {
      const tty = await openShell(t);
      await t.manager.type({ tty, expect: 'bash', text: 'python3 -q' });
      const started = await t.manager.wait({ timeoutMs: 15_000 });
      expect(started.reason).toBe('input');
      expect(reportOf(started, tty).text).toMatch(/>>> $/m);
      await t.manager.type({ tty, expect: 'python3', text: '6 * 7' });
      expect(reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty).text).toMatch(/^42$/m);
      await t.manager.type({ tty, expect: 'python', text: 'def f(x):\n    return x + 1\n' });
      await t.manager.wait({ timeoutMs: 10_000 });
      await t.manager.type({ tty, expect: 'python3', text: '\n' });
      await t.manager.wait({ timeoutMs: 10_000 });
      await t.manager.type({ tty, expect: 'python3', text: 'f(99)' });
      expect(reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty).text).toMatch(/^100$/m);
      // A pasted script comes back without its echo: only what it printed, then the prompt.
      await t.manager.type({ tty, expect: 'python3', text: 'for i in range(3):\n    print(i * 11)\n' });
      const pasted = reportOf(await t.manager.wait({ timeoutMs: 10_000 }), tty).text;
      expect(pasted).toMatch(/^0\n11\n22$/m);
      expect(pasted).not.toContain('range(3)');
      await t.manager.type({ tty, expect: 'python3', text: 'C-d' });
      const exited = await t.manager.wait({ timeoutMs: 10_000 });
      expect(exited.open.find((o) => o.tty === tty)?.program).toBe('bash');
      await closeAll(t);
    });

    it('refuses to act before the agent has looked, and names what really runs', async () => {
      const a = await openShell(t);
      const b = await openShell(t);
      const finished = new Promise<void>((resolve) => {
        const subscription = t.manager.events.onCommandFinished((e) => {
          if (e.tty !== a) return;
          subscription.dispose();
          resolve();
        });
      });
      await t.manager.type({ tty: a, expect: 'bash', text: 'echo unseen-output' });
      // The command has ended on a (news the agent has not seen) before b is typed into.
      await finished;
      const refused = await codeOf(t.manager.type({ tty: b, expect: 'bash', text: 'echo no' }));
      expect(refused.code).toBe('UNSEEN_OUTPUT');
      expect(refused.message).toContain(`TTY ${a}`);
      expect(refused.message).toContain('wait()');
      expect(t.manager.hasUnseen()).toBe(true);
      expect(t.manager.unseenSummary()).toContain(`TTY ${a}`);
      expect(reportOf(await t.manager.wait({ timeoutMs: 5000 }), a).text).toContain('unseen-output');
      const mismatch = await codeOf(t.manager.type({ tty: b, expect: 'python3', text: 'print(1)' }));
      expect(mismatch.code).toBe('EXPECT_MISMATCH');
      expect(mismatch.message).toContain('running bash');
      await closeAll(t);
    });

    it('lets C-c stop a runaway loop whose output never stops arriving, but not typing text into it', async () => {
      const tty = await openShell(t);
      await t.manager.type({ tty, expect: 'bash', text: 'while :; do echo tick; done' });
      await t.manager.wait({ timeoutMs: 500 });
      await expect.poll(() => t.manager.list().find((info) => info.tty === tty)?.unseenLines ?? 0).toBeGreaterThan(0);
      expect((await codeOf(t.manager.type({ tty, expect: 'bash', text: 'echo no' }))).code).toBe('UNSEEN_OUTPUT');
      await t.manager.type({ tty, expect: 'bash', text: 'C-c' });
      const stopped = await t.manager.wait({ timeoutMs: 10_000 });
      expect(reportOf(stopped, tty).exitCode).toBe(130);
      expect(reportOf(await run(t, tty, 'echo after-the-loop'), tty).text).toContain('after-the-loop');
    });

    it('serves type and wait called together (wait first), and an aborted wait marks nothing seen', async () => {
      const tty = await openShell(t);
      const [result] = await Promise.all([t.manager.wait({ timeoutMs: 10_000 }), t.manager.type({ tty, expect: 'bash', text: 'echo together' })]);
      expect(result.reason).toBe('command-finished');
      expect(reportOf(result, tty).text).toContain('together');

      await t.manager.type({ tty, expect: 'bash', text: 'sleep 0.3; echo after-abort; sleep 30' });
      const controller = new AbortController();
      const aborted = t.manager.wait({ timeoutMs: 20_000, signal: controller.signal });
      await expect.poll(() => t.manager.hasUnseen()).toBe(true);
      // The line it printed (the echo of the command line is not news: the agent typed it).
      await expect.poll(() => t.manager.list()[0]?.unseenLines ?? 0).toBeGreaterThanOrEqual(1);
      controller.abort();
      await expect(aborted).rejects.toThrow();
      expect(t.manager.hasUnseen()).toBe(true);
      const seen = await t.manager.wait({ timeoutMs: 1000 });
      expect(reportOf(seen, tty).text).toContain('after-abort');
      await t.manager.type({ tty, expect: 'sleep', text: 'C-c' });
      await t.manager.wait({ timeoutMs: 5000 });
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
  });
}
