import { describe, expect, it } from 'vitest';
import { parseProbeReply } from '../../../../src/tty/probe/foreground-probe.js';
import {
  type InputWait,
  actedSince,
  askingFollower,
  classifyForeground,
  foregroundName,
  groupNames,
  promptText,
  sampleSignature,
  shellAtPrompt,
  waitTimerMs,
} from '../../../../src/tty/probe/input-wait.js';

// Replies of the real probe in a container (x86_64), one pane each.
const REPLIES: Array<[string, string[], InputWait]> = [
  ['python3 -c "input()" (line prompt)', ['T 25 25', 'P 25 S 16 wait_woken python3 0 0x0 0x1c082ea0 0x400 0x1000 0x1 0x0 0x7ffc23c64558 0x7f00b596e2ad'], 'input'],
  ['bash read -p', ['T 165 165', 'P 165 S 3 wait_woken bash 0 0x0 0x562f94e0ef40 0x1000 0x1000 0x7f25132cec68 0x0 0x7ffda3cff758 0x7f25131f32ad'], 'input'],
  ['the python3 REPL', ['T 28 28', 'P 28 S 37 poll_schedule_timeout.constprop.0 python3 270 0x1 0x7fffe39abf10 0x0 0x0 0x0 0x0 0x7fffe39abe80 0x7f892e00f954'], 'input'],
  ['an idle bash', ['T 156 156', 'P 156 S 6 poll_schedule_timeout.constprop.0 bash 270 0x1 0x7ffe50f6ddb0 0x0 0x0 0x0 0x7ffe50f6dce0 0x7ffe50f6dca0 0x7fe8f8014aec'], 'input'],
  ['vi, long after a key', ['T 159 159', 'P 159 S 20 poll_schedule_timeout.constprop.0 vi 270 0x1 0x55d65ea98e80 0x55d65ea98e00 0x55d65ea98d80 0x0 0x0 0x7fffb88c3b10 0x7f33abb64954'], 'input'],
  ['vi, just after a key (swap timer)', ['T 159 159', 'P 159 S 20 poll_schedule_timeout.constprop.0 vi 270 0x1 0x55d65ea98e80 0x55d65ea98e00 0x55d65ea98d80 0x7fffb88c3b20 0x0 0x7fffb88c3b10 0x7f33abb64954'], 'input-timed'],
  ['top between redraws', ['T 162 162', 'P 162 S 144 poll_schedule_timeout.constprop.0 top 270 0x1 0x7ffd402f0cb0 0x0 0x0 0x7ffd402f0c10 0x7ffd402f0c20 0x7ffd402f0be0 0x7f0ef301eaec'], 'input-timed'],
  ['sleep 5', ['T 40 41', 'P 41 S 2 hrtimer_nanosleep sleep 230 0x0 0x0 0x7ffc1c1a0ef0 0x7ffc1c1a0ef0 0x0 0x0 0x7ffc1c1a0ed8 0x7f1b7a4e0a2a'], 'busy'],
  ['a loop on the CPU', ['T 40 42', 'P 42 R 900 0 python3 running'], 'busy'],
  ['woken by typed keys, not run yet', ['T 25 25', 'P 25 R 16 0 python3 0 0x0 0x1c082ea0 0x400 0x1000 0x1 0x0 0x7ffc23c64558 0x7f00b596e2ad'], 'busy'],
  ['reading a pipe, not the terminal', ['T 40 43', 'P 43 S 5 pipe_read cat 0 0x3 0x7ffd 0x20000 0x0 0x0 0x0 0x0 0x0'], 'busy'],
  ['select on several fds', ['T 40 44', 'P 44 S 5 poll_schedule_timeout.constprop.0 ssh 270 0x5 0x7ffd 0x0 0x0 0x0 0x0 0x0 0x0'], 'busy'],
  ['poll on the terminal, no timeout', ['T 40 45', 'P 45 S 5 poll_schedule_timeout.constprop.0 less 7 0x7ffd 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0'], 'input'],
  ['an idle event loop (node REPL)', ['T 40 46', 'P 46 S 5 ep_poll node 232 0x4 0x7ffd 0x400 0xffffffff 0x0 0x0 0x0 0x0'], 'input'],
  ['an event loop with a timer', ['T 40 46', 'P 46 S 5 ep_poll node 232 0x4 0x7ffd 0x400 0x3e8 0x0 0x0 0x0 0x0'], 'busy'],
  [
    'make waiting for a child that prompts',
    ['T 40 47', 'P 47 S 5 do_wait make 61 0xffffffff 0x7ffd 0x0 0x0 0x0 0x0 0x0 0x0', 'P 48 S 5 wait_woken python3 0 0x0 0x1c08 0x400 0x1000 0x1 0x0 0x0 0x0'],
    'input',
  ],
  [
    'a pipeline whose first command waits for the pager to read (`seq 1000000 | less`)',
    ['T 40 47', 'P 47 S 5 pipe_write seq 1 0x1 0x55 0x1000 0x0 0x0 0x0 0x0 0x0', 'P 48 S 5 poll_schedule_timeout.constprop.0 less 7 0x7ffd 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0'],
    'input',
  ],
  [
    'the same on Linux 6.18, which names the pipe functions anon_pipe_*',
    ['T 40 47', 'P 47 S 5 anon_pipe_write seq 1 0x1 0x55 0x1000 0x0 0x0 0x0 0x0 0x0', 'P 48 S 5 poll_schedule_timeout.constprop.0 less 7 0x7ffd 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0'],
    'input',
  ],
  [
    'a pipeline whose first command writes to the network',
    ['T 40 47', 'P 47 S 5 wait_woken nc 1 0x3 0x55 0x1000 0x0 0x0 0x0 0x0 0x0', 'P 48 S 5 poll_schedule_timeout.constprop.0 less 7 0x7ffd 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0'],
    'busy',
  ],
  ['a lone writer blocked on a full pipe (nobody of its group asks)', ['T 40 47', 'P 47 S 5 pipe_write seq 1 0x1 0x55 0x1000 0x0 0x0 0x0 0x0 0x0'], 'busy'],
  [
    'tail -f: a poll on its inotify fd, not on the terminal',
    ['T 40 59', 'P 59 S 4 poll_schedule_timeout.constprop.0 tail 7 0x7ffd61fcde30 0x1 0xffffffff 0x7ff41bb108d0 0x0 0x0 0x0 0x0', 'W 59 0 -'],
    'busy',
  ],
  ['less, its poll fd read and found to be the terminal', ['T 40 45', 'P 45 S 5 poll_schedule_timeout.constprop.0 less 7 0x7ffd 0x1 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0', 'W 45 1 -'], 'input'],
  ['less reading /dev/tty on an fd of its own (`seq 100 | less`)', ['T 40 48', 'P 48 S 3 wait_woken less 0 0x3 0x7ffd 0x1 0x0 0x0 0x0 0x0 0x0', 'W 48 1 -'], 'input'],
  ['reading another fd that is not the terminal', ['T 40 43', 'P 43 S 5 pipe_read cat 0 0x3 0x7ffd 0x20000 0x0 0x0 0x0 0x0 0x0', 'W 43 0 -'], 'busy'],
  ['the pane process is gone', ['T 99999 -'], 'unknown'],
  ['junk from a hostile container', ['T x y', 'P 1 S 5 wait_woken evil 0 0x0', 'garbage', 'P', 'T 1 1 1'], 'unknown'],
];

describe('classifyForeground on real probe replies (x86_64)', () => {
  for (const [name, lines, expected] of REPLIES) {
    it(`${name}: ${expected}`, () => {
      const samples = parseProbeReply(lines);
      const sample = [...samples.values()][0];
      expect(classifyForeground(sample, 'x64')).toBe(expected);
    });
  }

  it('knows nothing about an architecture it has no table for', () => {
    const sample = parseProbeReply(REPLIES[0]![1]).get(25);
    expect(classifyForeground(sample, 'mips')).toBe('unknown');
  });
});

describe('shellAtPrompt (the marks will say the command ended, not the probe)', () => {
  const sampleOf = (name: string) => [...parseProbeReply(REPLIES.find(([n]) => n === name)![1]).values()][0];
  it('is the shell itself in readline, not a builtin read, a child program or a REPL', () => {
    expect(shellAtPrompt(sampleOf('an idle bash'), 'x64')).toBe(true);
    expect(shellAtPrompt(sampleOf('bash read -p'), 'x64')).toBe(false);
    expect(shellAtPrompt(sampleOf('sleep 5'), 'x64')).toBe(false);
    expect(shellAtPrompt(sampleOf('the pane process is gone'), 'x64')).toBe(false);
  });
});

describe('waitTimerMs (how long a timed wait on the terminal lasts)', () => {
  const vi = (w: string) => parseProbeReply(['T 159 159', 'P 159 S 20 poll_schedule_timeout.constprop.0 vi 270 0x1 0x55d6 0x55d5 0x55d4 0x7fffb88c3b20 0x0 0x7fff 0x7f33', w]).get(159);
  it('is the timer the probe read from memory (vim idle: updatetime; after Escape: ttimeoutlen)', () => {
    expect(waitTimerMs(vi('W 159 - 4000'), 'x64')).toBe(4000);
    expect(waitTimerMs(vi('W 159 - 100'), 'x64')).toBe(100);
    expect(classifyForeground(vi('W 159 - 4000'), 'x64')).toBe('input-timed');
  });
  it('is poll\'s own timeout argument, without memory', () => {
    const poll = parseProbeReply(['T 40 45', 'P 45 S 5 poll_schedule_timeout.constprop.0 prog 7 0x7ffd 0x1 0x3e8 0x0 0x0 0x0 0x0 0x0']).get(40);
    expect(waitTimerMs(poll, 'x64')).toBe(1000);
  });
  it('is unknown when memory was unreadable, the line is for another process, or it is junk', () => {
    expect(waitTimerMs(vi('garbage'), 'x64')).toBeUndefined();
    expect(waitTimerMs(vi('W 158 - 4000'), 'x64')).toBeUndefined();
    for (const junk of ['W 159 - -1', 'W 159 - 99999999999', 'W 159 - 4e3', 'W 159 2 x', 'W 159 - 4000 extra', 'W 159']) {
      const sample = vi(junk);
      expect(waitTimerMs(sample, 'x64'), junk).toBeUndefined();
      expect(sample?.processes[0]?.pollsTerminal, junk).toBeUndefined();
    }
  });
  it('is undefined when nothing waits with a timer', () => {
    expect(waitTimerMs(parseProbeReply(REPLIES[0]![1]).get(25), 'x64')).toBeUndefined();
  });
});

describe('parseProbeReply', () => {
  it('keeps one sample per pane, with processes, runs and name', () => {
    const samples = parseProbeReply([...REPLIES[0]![1], ...REPLIES[2]![1]]);
    expect([...samples.keys()]).toEqual([25, 28]);
    expect(samples.get(28)?.processes[0]).toMatchObject({ pid: 28, state: 'S', runs: 37, syscall: 270, name: 'python3' });
  });

  it('signatures differ once a process has run again', () => {
    const before = parseProbeReply(REPLIES[2]![1]).get(28);
    const after = parseProbeReply([REPLIES[2]![1][0]!, REPLIES[2]![1][1]!.replace(' 37 ', ' 38 ')]).get(28);
    expect(sampleSignature(before)).not.toBe(sampleSignature(after));
    expect(sampleSignature(before)).toBe(sampleSignature(parseProbeReply(REPLIES[2]![1]).get(28)));
  });

  const reply = (name: string) => parseProbeReply(REPLIES.find(([n]) => n.startsWith(name))![1]).get(40)!;
  it('names the group leader, or the newest process when the leader is gone', () => {
    expect(foregroundName(reply('make waiting'))).toBe('make');
    expect(foregroundName(parseProbeReply(['T 40 47', 'P 47 Z 5 0 seq none', 'P 48 S 5 0 less none']).get(40))).toBe('less');
  });

  it('names the later command of a pipeline that asks for input while its leader lives, not a leader that asks itself', () => {
    expect(askingFollower(reply('a pipeline whose first command waits'), 'x64')).toEqual({ leader: 'seq', name: 'less' });
    expect(askingFollower(reply('make waiting'), 'x64')).toEqual({ leader: 'make', name: 'python3' });
    expect(askingFollower(reply('poll on the terminal, no timeout'), 'x64')).toBeUndefined();
    expect(askingFollower(parseProbeReply(['T 40 47', 'P 47 Z 5 0 seq none', 'P 48 S 5 poll_schedule_timeout less 7 0x7ffd 0x1 0xffffffffffffffff']).get(40)!, 'x64')).toBeUndefined();
  });

  it('lists the live processes of the group, which expect may name', () => {
    expect(groupNames(reply('a pipeline whose first command waits'))).toEqual(['seq', 'less']);
    expect(groupNames(parseProbeReply(['T 40 47', 'P 47 Z 5 0 seq none', 'P 48 S 5 0 less none']).get(40))).toEqual(['less']);
    expect(groupNames(undefined)).toEqual([]);
  });
});

describe('actedSince (the program read the keys sent after `before`)', () => {
  const repl = (runs: number, state = 'S') => parseProbeReply(['T 28 28', `P 28 ${state} ${runs} poll_schedule_timeout python3 270 0x1 0x7f 0x0 0x0 0x0`]).get(28)!;
  it('no: the same process has not run since (the keys are still on their way)', () => {
    expect(actedSince(repl(37), repl(37))).toBe(false);
  });
  it('yes: it ran since, or another group or a new process is in the foreground', () => {
    expect(actedSince(repl(37), repl(39))).toBe(true);
    expect(actedSince(repl(37), parseProbeReply(['T 28 30', 'P 30 S 2 wait_woken python3 0 0x0']).get(28))).toBe(true);
    expect(actedSince(repl(37), parseProbeReply(['T 28 28', 'P 28 S 37 do_wait bash 61 0x0', 'P 31 S 1 wait_woken read 0 0x0']).get(28))).toBe(true);
  });
  it('no answer from the probe is not an answer', () => {
    expect(actedSince(repl(37), undefined)).toBe(false);
    expect(actedSince(repl(37), parseProbeReply(['T 28 -']).get(28))).toBe(false);
  });
});

describe('promptText', () => {
  it('is the cursor row up to the cursor, trimmed and short', () => {
    expect(promptText('name? ', 6)).toBe('name?');
    expect(promptText('>>> ', 4)).toBe('>>>');
    expect(promptText(`${'x'.repeat(200)}`, 200)).toHaveLength(80);
  });
});
