import { describe, expect, it } from 'vitest';
import { type CommandFinished, type CommandStarted, TtyEventSource } from '../../../../src/tty/api/tty-events.js';
import { type ShellMark, TtyEmulator } from '../../../../src/tty/screen/tty-emulator.js';
import { AgentActions } from '../../../../src/tty/terminal/agent-actions.js';
import { Liveness } from '../../../../src/tty/terminal/liveness.js';
import { ShellCommands } from '../../../../src/tty/terminal/shell-commands.js';

const KEY = 'f00d';

function shell(statusKey: string | undefined) {
  const events = new TtyEventSource((error) => {
    throw error;
  });
  const started: CommandStarted[] = [];
  const finished: CommandFinished[] = [];
  events.onCommandStarted((e) => started.push(e));
  events.onCommandFinished((e) => finished.push(e));
  const commands = new ShellCommands(3, statusKey, events);
  const emulator = new TtyEmulator({ cols: 40, rows: 5 });
  /** A mark as the emulator hands it over: refused ones change nothing. */
  const mark = (m: ShellMark): void => {
    if (commands.accepts(m)) commands.marked(m, emulator);
  };
  return { commands, emulator, started, finished, mark };
}

describe('ShellCommands', () => {
  it('counts a finished command once its prompt is drawn, with its exit code and duration', () => {
    const { commands, finished, mark } = shell(KEY);
    mark({ kind: 'C', key: KEY, at: 1000 });
    expect(commands.running).toBe(true);
    expect(commands.runningSince).toBe(1000);
    mark({ kind: 'D', key: KEY, exitCode: 2, at: 1500 });
    expect(commands.running).toBe(false);
    expect(commands.ends).toBe(0);
    mark({ kind: 'B', key: KEY, at: 1510 });
    expect(commands.ends).toBe(1);
    expect(commands.lastEnd).toEqual({ at: 1500, exitCode: 2, durationMs: 500 });
    expect(finished).toEqual([{ tty: 3, at: 1500, exitCode: 2, durationMs: 500 }]);
    commands.reported();
    expect(commands.reportedEnds).toBe(1);
  });

  it('refuses unsigned marks once its shell signed one: text the agent printed cannot end a command', () => {
    const { commands, started, finished, mark } = shell(KEY);
    mark({ kind: 'C', key: KEY, at: 1000 });
    expect(commands.signed).toBe(true);
    mark({ kind: 'D', exitCode: 0, at: 1100 });
    mark({ kind: 'B', at: 1110 });
    mark({ kind: 'D', key: 'beef', exitCode: 0, at: 1120 });
    expect(commands.running).toBe(true);
    expect(commands.ends).toBe(0);
    expect(started).toHaveLength(1);
    expect(finished).toEqual([]);
  });

  it('takes unsigned marks from a shell that never signed, and none signed with another key', () => {
    const { commands, mark } = shell(KEY);
    mark({ kind: 'C', key: 'beef', at: 1000 });
    expect(commands.running).toBe(false);
    mark({ kind: 'C', at: 1000 });
    expect(commands.running).toBe(true);
    const old = shell(undefined);
    old.mark({ kind: 'C', key: 'beef', at: 1000 });
    expect(old.commands.running).toBe(true);
  });

  it('ends a command a former server saw start when its prompt comes with no D mark (the D fell into the adoption\'s capture), with the status its title tells', async () => {
    const events = new TtyEventSource((error) => {
      throw error;
    });
    const commands = new ShellCommands(3, KEY, events);
    commands.signs();
    const emulator: TtyEmulator = new TtyEmulator({ cols: 40, rows: 5, onMark: (m) => commands.accepts(m) && commands.marked(m, emulator) });
    commands.resume(1_700_000_001_000);
    // What the next server reads after its capture: the rest of the prompt (its title, then B), the D before it already captured.
    emulator.write(`\x1b]2;ak-${KEY}-7-1700000004000000\x07\x1b]133;B;ak=${KEY}\x07$ `);
    await emulator.drain();
    expect(commands.running).toBe(false);
    expect(commands.ends).toBe(1);
    expect(commands.lastEnd).toMatchObject({ exitCode: 7, durationMs: 3000 });
    // A title not its shell's own (another key) ends nothing.
    const other = new ShellCommands(3, KEY, events);
    other.signs();
    const second: TtyEmulator = new TtyEmulator({ cols: 40, rows: 5, onMark: (m) => other.accepts(m) && other.marked(m, second) });
    other.resume(1_700_000_001_000);
    second.write(`\x1b]2;ak-beef-0-1700000004000000\x07\x1b]133;B;ak=${KEY}\x07$ `);
    await second.drain();
    expect(other.running).toBe(true);
    expect(other.ends).toBe(0);
  });

  it('counts a D mark whose prompt has no B after a second of quiet, and a command that ended while no server read', () => {
    const { commands, mark } = shell(KEY);
    mark({ kind: 'C', key: KEY, at: 1000 });
    mark({ kind: 'D', key: KEY, exitCode: 0, at: 2000 });
    commands.settleEnding(2900, 500);
    expect(commands.ends).toBe(0);
    commands.settleEnding(3001, 200);
    expect(commands.ends).toBe(0);
    commands.settleEnding(3001, 301);
    expect(commands.ends).toBe(1);
    commands.endedUnseen(5000, { exitCode: 7, endedAt: 4000 });
    expect(commands.lastEnd).toEqual({ at: 4000, exitCode: 7, durationMs: 0 });
    expect(commands.ends).toBe(2);
  });

  it('names the command line typed after the prompt when a command starts', async () => {
    const { emulator, started, mark } = shell(KEY);
    emulator.write(Buffer.from('$ '));
    await emulator.drain();
    mark({ kind: 'B', key: KEY, at: 1 });
    emulator.write(Buffer.from('make test'));
    await emulator.drain();
    mark({ kind: 'C', key: KEY, at: 2 });
    expect(started).toEqual([{ tty: 3, at: 2, command: 'make test' }]);
  });
});

describe('AgentActions', () => {
  it('keeps what the agent did until it looks, and its last action until a wait settles it', () => {
    const actions = new AgentActions();
    expect(actions.actedSinceLook).toBe(false);
    actions.acted('open', 10, 0, true, undefined);
    expect(actions.actedSinceLook).toBe(true);
    expect(actions.integrated).toBe(true);
    actions.acted('type', 20, 1, false, { text: 'ls', enter: true });
    expect(actions.pending).toEqual({ kind: 'type', at: 20, endsBefore: 1 });
    expect(actions.integrated).toBe(true);
    expect(actions.typedLines).toEqual(['ls']);
    actions.settled();
    expect(actions.pending).toBeUndefined();
    expect(actions.sent).toHaveLength(1);
    actions.looked();
    expect(actions.sent).toEqual([]);
    expect(actions.actedSinceLook).toBe(false);
  });

  it('keeps at most 64 inputs between two looks', () => {
    const actions = new AgentActions();
    for (let i = 0; i < 100; i++) actions.acted('type', i, 0, false, { key: 'Up' });
    expect(actions.sent).toHaveLength(64);
  });
});

describe('Liveness', () => {
  it('dies once, and is ending while the host has no exit status, for the grace only', () => {
    const life = new Liveness();
    expect(life.ending).toBe(false);
    expect(life.awaitingExitStatus(1000, 500)).toBe(true);
    expect(life.ending).toBe(true);
    expect(life.awaitingExitStatus(1400, 500)).toBe(true);
    expect(life.awaitingExitStatus(1500, 500)).toBe(false);
    expect(life.died(3)).toBe(true);
    expect(life.died(4)).toBe(false);
    expect(life).toMatchObject({ alive: false, exitCode: 3, unreported: true });
    expect(life.ending).toBe(false);
    life.reported();
    expect(life.unreported).toBe(false);
  });
});
