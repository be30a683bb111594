import type { Terminals } from '../../../src/server/terminals/terminals.js';
import { newLinesNews } from '../../../src/tty/type/news.js';
import { expectMismatch, textTooLong, ttyCapacity, ttyNotOpen, ttyOutOfRange, unseenOutput } from '../../../src/tty/api/tty-errors.js';
import { sleep } from '../../../src/util/sleep.js';
import type { AdoptReport, TtyInfo, TtyReport, TypeInput, WaitResult } from '../../../src/tty/api/types.js';

/**
 * A stand-in for the TtyManager, for unit tests of the MCP layer only (the integration
 * tests use the real one). Each terminal echoes what is typed as `$ text` and, for
 * `print N`, prints N numbered lines. Its refusals are the real manager's (src/tty/api/tty-errors.ts):
 * test/integration/server/terminals-contract.test.ts runs both through the same assertions.
 */
interface FakeTty {
  command: string;
  program: string;
  alive: boolean;
  unseen: string[];
}

export class FakeTerminals implements Terminals {
  readonly where = 'fake sandbox';
  readonly maxTtys = 20;
  readonly ttys = new Map<number, FakeTty>();
  adoptReport: AdoptReport = { adopted: [], lost: [], persistent: true };
  disposed = false;
  tick = 0;
  /** Set to make the next call of a method throw (to test unexpected errors). */
  failNext: Error | undefined;
  /** Waits currently blocked, and how they ended. */
  waitsAborted = 0;
  waitsBlocked = 0;
  /** While true, a wait blocks even with output pending, like a real wait for a command still running. */
  holdWaits = false;

  constructor(private readonly root = '/data') {}

  setTick(tick: number): void {
    this.tick = tick;
  }

  private take(): void {
    const error = this.failNext;
    this.failNext = undefined;
    if (error) throw error;
  }

  private get(tty: number): FakeTty {
    const found = this.ttys.get(tty);
    if (found) return found;
    if (!Number.isInteger(tty) || tty < 0 || tty >= this.maxTtys) throw ttyOutOfRange(tty, this.maxTtys);
    throw ttyNotOpen(tty, [...this.ttys.keys()].sort((a, b) => a - b));
  }

  async open(options: { command?: string; tty?: number; cwd?: string } = {}) {
    this.take();
    let tty = options.tty;
    if (tty === undefined) {
      tty = [...Array(this.maxTtys).keys()].find((n) => !this.ttys.has(n));
      if (tty === undefined) throw ttyCapacity(this.maxTtys);
    }
    const command = options.command ?? 'bash';
    this.ttys.set(tty, { command, program: command.split(' ')[0] ?? 'bash', alive: true, unseen: [`started ${command}`] });
    await Promise.resolve();
    return { tty, command, capacity: { used: this.ttys.size, max: this.maxTtys } };
  }

  async type(input: TypeInput) {
    this.take();
    const tty = this.get(input.tty);
    const bytes = Buffer.byteLength(input.text);
    if (bytes > 16_384) throw textTooLong(bytes, 16_384);
    // Simpler than the real rule (src/tty/type/news.ts): any unseen output anywhere refuses, in its words.
    const unseen = [...this.ttys.entries()].filter(([, t]) => t.unseen.length > 0);
    if (unseen.length > 0) throw unseenOutput(unseen.map(([n, t]) => ({ tty: n, what: newLinesNews(t.unseen.length, t.unseen.at(-1)) })));
    if (tty.program !== input.expect) throw expectMismatch(input.tty, input.expect, tty.program, { expectedShell: input.expect === 'bash', actualShell: tty.program === 'bash', asking: false });
    tty.unseen.push(`$ ${input.text}`);
    const print = /^print (\d+)$/.exec(input.text);
    if (print) for (let i = 1; i <= Number(print[1]); i++) tty.unseen.push(`line ${i} ${'x'.repeat(60)}`);
    if (input.text === 'exit') tty.alive = false;
    return Promise.resolve({ tty: input.tty, sent: 'text' as const, bytes: input.text.length, enter: input.enter ?? true });
  }

  async wait(options: { timeoutMs: number; signal?: AbortSignal }): Promise<WaitResult> {
    this.take();
    options.signal?.throwIfAborted();
    const began = Date.now();
    const pending = [...this.ttys.values()].some((t) => t.unseen.length > 0);
    if (!pending || this.holdWaits) {
      // Nothing new: block until the timeout or the abort, like a real wait on a quiet terminal.
      this.waitsBlocked += 1;
      await sleep(options.timeoutMs, options.signal);
      this.waitsBlocked -= 1;
      if (options.signal?.aborted) {
        this.waitsAborted += 1;
        throw new Error('wait aborted');
      }
    }
    const changed: TtyReport[] = [];
    for (const [n, tty] of this.ttys) {
      if (tty.unseen.length === 0) continue;
      const lines = tty.unseen;
      const shown = lines.length <= 20 ? lines : [...lines.slice(0, 10), `[... ${lines.length - 20} lines elided]`, ...lines.slice(-10)];
      changed.push({
        tty: n,
        program: tty.program,
        alive: tty.alive,
        ...(tty.alive ? { exitCode: 0, durationMs: 5 } : { exitCode: 0 }),
        fullScreen: false,
        text: shown.join('\n'),
        totalLines: lines.length,
        elidedLines: Math.max(0, lines.length - 20),
        files: { scrollback: `${this.root}/tmp/sessions/tty_${n}/scrollback`, screen: `${this.root}/tmp/sessions/tty_${n}/screen` },
      });
      tty.unseen = [];
    }
    return {
      reason: changed.length > 0 ? 'command-finished' : 'timeout',
      elapsedMs: Date.now() - began,
      changed,
      open: [...this.ttys.entries()].map(([tty, t]) => ({ tty, program: t.program, alive: t.alive })),
    };
  }

  async close(tty: number) {
    this.take();
    this.get(tty);
    this.ttys.delete(tty);
    return Promise.resolve({
      tty,
      archivedTo: `${this.root}/system/logs/sessions/tty_${tty}-tick-000`,
      capacity: { used: this.ttys.size, max: this.maxTtys },
    });
  }

  list(): Promise<TtyInfo[]> {
    return Promise.resolve(
      [...this.ttys.entries()].map(([tty, t]) => ({
        tty,
        command: t.command,
        program: t.program,
        alive: t.alive,
        unseenLines: t.unseen.length,
        lastActivity: new Date(0).toISOString(),
        cols: 120,
        rows: 40,
      })),
    );
  }

  dispose(): Promise<void> {
    this.disposed = true;
    return Promise.resolve();
  }
}
