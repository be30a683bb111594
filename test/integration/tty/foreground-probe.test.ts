import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { ForegroundProbe } from '../../../src/tty/foreground-probe.js';
import { type ForegroundProcess, classifyForeground } from '../../../src/tty/input-wait.js';
import { tmuxArgv, tmuxSocketName } from '../../../src/tty/tmux-server.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type Terminals, startTerminals, waitFor } from './helpers/terminals.js';

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

  const backToShell = () => expect.poll(async () => (await t.manager.wait(5)).reason, { timeout: 30_000 }).toBe('command-finished');

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
    for (let round = 0; round < 10 && !both(); round++) {
      await t.manager.type({ tty, expect: 'vi', text: 'Escape' });
      const until = Date.now() + 3000;
      while (Date.now() < until && !both()) timers.add((await foreground('vi'))?.timerMs);
    }
    expect(seen()).toContain(4000);
    expect(both(), `timers seen: ${seen().join(', ')}`).toBe(true);
    for (const ms of timers) if (ms !== undefined) expect([25, 100, 1000, 4000], `timer ${ms} ms`).toContain(ms);
    await t.manager.type({ tty, expect: 'vi', text: ':q!' });
    await backToShell();
  }, 90_000);

  it('tells a poll on the terminal from `tail -f` polling its inotify fd (a file in the data dir)', async () => {
    await t.manager.wait(1);
    await t.manager.type({ tty, expect: 'bash', text: `seq 3 > ${t.test.dataDir}/follow.txt; tail -f ${t.test.dataDir}/follow.txt` });
    await expect.poll(async () => (await foreground('tail'))?.pollsTerminal, { timeout: 30_000 }).toBe(false);
    expect(classifyForeground((await probe.sample([panePid]))?.get(panePid))).toBe('busy');
    await t.manager.type({ tty, expect: 'tail', text: 'C-c' });
    await backToShell();
    // python's input() blocks in read on fd 0: no W line, and waiting for input.
    await t.manager.wait(1);
    await t.manager.type({ tty, expect: 'bash', text: `python3 -c 'input("name? ")'` });
    await expect.poll(async () => classifyForeground((await probe.sample([panePid]))?.get(panePid)), { timeout: 30_000 }).toBe('input');
    expect((await foreground('python3'))?.pollsTerminal).toBeUndefined();
    await t.manager.type({ tty, expect: 'python3', text: 'C-c' });
  }, 90_000);
});
