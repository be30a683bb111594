import { describe, expect, it } from 'vitest';
import type { ForegroundProbe } from '../../../../src/tty/probe/foreground-probe.js';
import { type ForegroundSample, timedWaitSyscalls } from '../../../../src/tty/probe/input-wait.js';
import { InputWatch } from '../../../../src/tty/terminal/input-watch.js';
import type { Tty } from '../../../../src/tty/terminal/tty.js';

const PANE = 40;
const READ = timedWaitSyscalls().read[0] ?? 0;

/** A shell's `read -p`: blocked reading fd 0, as the probe reports it. */
function blocked(runs = 7): ForegroundSample {
  return { panePid: PANE, tpgid: PANE, processes: [{ pid: PANE, state: 'S', runs, wchan: 'wait_woken', syscall: READ, args: [0n, 1n, 1n], name: 'bash' }] };
}

function fakeProbe(answer: () => ForegroundSample) {
  let asked = 0;
  const probe = {
    usable: true,
    sample: async (pids: readonly number[]) => {
      asked += 1;
      return new Map(pids.map((pid) => [pid, answer()]));
    },
  };
  return { probe: probe as unknown as ForegroundProbe, asked: () => asked };
}

/** A quiet terminal with nothing pending: its program drew long ago. */
function quietTty(): Tty {
  return {
    alive: true,
    state: { pid: PANE },
    actions: { pending: undefined },
    commands: { running: true },
    emulator: { lastOutputAt: 0, bytesWritten: 100, backlog: 0 },
  } as unknown as Tty;
}

/** A fence the test lets go of. */
function heldFence() {
  const waiting: Array<() => void> = [];
  return {
    fence: () => new Promise<void>((resolve) => waiting.push(resolve)),
    release: () => waiting.splice(0).forEach((resolve) => resolve()),
    sent: () => waiting.length,
  };
}

describe('InputWatch: a fence confirms that a program waits for input', () => {
  it('confirms in one pass when the fence comes back at once', async () => {
    const { probe, asked } = fakeProbe(() => blocked());
    const watch = new InputWatch(probe);
    const tty = quietTty();
    const ready = await watch.waiting([tty], Date.now(), async () => undefined);
    expect([...ready.keys()]).toEqual([tty]);
    expect(asked()).toBe(2);
  });

  it('confirms nothing while the fence is held up (output may still be on its way), and confirms once it is back', async () => {
    const { probe } = fakeProbe(() => blocked());
    const watch = new InputWatch(probe);
    const tty = quietTty();
    const held = heldFence();
    expect((await watch.waiting([tty], Date.now(), held.fence)).size).toBe(0);
    expect(watch.recheckInMs).toBeGreaterThan(0);
    // The next pass does not send a second fence while the first is on its way.
    expect((await watch.waiting([tty], Date.now(), held.fence)).size).toBe(0);
    expect(held.sent()).toBe(1);
    held.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await watch.waiting([tty], Date.now(), held.fence)).size).toBe(1);
  });

  it('does not confirm a program that ran between the two answers, fence or not', async () => {
    let runs = 7;
    const { probe } = fakeProbe(() => blocked(runs++));
    const watch = new InputWatch(probe);
    expect((await watch.waiting([quietTty()], Date.now(), async () => undefined)).size).toBe(0);
  });

  it('does not confirm when output came between the two answers', async () => {
    const { probe } = fakeProbe(() => blocked());
    const watch = new InputWatch(probe);
    const tty = quietTty();
    const fence = async () => {
      (tty.emulator as { bytesWritten: number }).bytesWritten += 10;
    };
    expect((await watch.waiting([tty], Date.now(), fence)).size).toBe(0);
  });

  it('falls back to time when the fence fails (tmux gone or too old): two answers 12 ms apart', async () => {
    const { probe } = fakeProbe(() => blocked());
    let now = 1_000_000;
    const watch = new InputWatch(probe, () => now);
    const tty = quietTty();
    const broken = () => Promise.reject(new Error('tmux is gone'));
    expect((await watch.waiting([tty], now, broken)).size).toBe(0);
    expect((await watch.waiting([tty], now, broken)).size).toBe(0);
    // Confirmed 12 ms after the first answer, not a millisecond before.
    expect(watch.recheckInMs).toBe(12);
    now += 11;
    expect((await watch.waiting([tty], now, broken)).size).toBe(0);
    expect(watch.recheckInMs).toBe(1);
    now += 1;
    expect((await watch.waiting([tty], now, broken)).size).toBe(1);
  });
});

describe('InputWatch: after silence, one answer tells a prompt from a quiet program', () => {
  const SELECT = timedWaitSyscalls().select[0] ?? 0;
  /** bash back at its prompt: readline in select on fd 0 (nfds 1, no timer). */
  const atPrompt = (): ForegroundSample => ({
    panePid: PANE,
    tpgid: PANE,
    processes: [{ pid: PANE, state: 'S', runs: 7, wchan: 'poll_schedule_timeout', syscall: SELECT, args: [1n, 1n, 0n, 0n, 0n], name: 'bash' }],
  });
  /** A program doing work: running, not blocked on the terminal. */
  const busy = (): ForegroundSample => ({ panePid: PANE, tpgid: 41, processes: [{ pid: 41, state: 'R', runs: 9, wchan: '0', syscall: undefined, args: [], name: 'python3' }] });

  it("counts a shell's `read` whose command is still running (a flood elsewhere holds the fence back)", async () => {
    const { probe, asked } = fakeProbe(() => blocked());
    const tty = quietTty();
    expect([...(await new InputWatch(probe).waitingAfterSilence([tty])).keys()]).toEqual([tty]);
    expect(asked()).toBe(1);
  });

  it('does not count a busy program, nor a shell back at its prompt while its end mark is on the way', async () => {
    expect((await new InputWatch(fakeProbe(busy).probe).waitingAfterSilence([quietTty()])).size).toBe(0);
    expect((await new InputWatch(fakeProbe(atPrompt).probe).waitingAfterSilence([quietTty()])).size).toBe(0);
  });
});
