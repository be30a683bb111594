import { KernelError } from '../../../src/errors.js';
import type { Terminals } from '../../../src/server/terminals/terminals.js';
import type { AdoptReport, TtyInfo, TtyReport, TypeInput, WaitResult } from '../../../src/tty/api/types.js';

/**
 * A stand-in for the TtyManager, for unit tests of the MCP layer only (the integration
 * tests use the real one). Each terminal echoes what is typed as `$ text` and, for
 * `print N`, prints N numbered lines. Its refusals are the real manager's, word for word:
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
    if (!Number.isInteger(tty) || tty < 0 || tty >= this.maxTtys) {
      throw new KernelError('TTY_OUT_OF_RANGE', `There is no TTY ${tty}: terminals are numbered 0 to ${this.maxTtys - 1}.`, { details: { tty, max: this.maxTtys } });
    }
    const open = [...this.ttys.keys()].sort((a, b) => a - b);
    throw new KernelError('TTY_NOT_FOUND', `TTY ${tty} is not open (${open.length > 0 ? `open: ${open.join(', ')}` : 'none is open'}). Open one with open().`, {
      details: { tty, open },
    });
  }

  async open(options: { command?: string; tty?: number; cwd?: string } = {}) {
    this.take();
    let tty = options.tty;
    if (tty === undefined) {
      tty = [...Array(this.maxTtys).keys()].find((n) => !this.ttys.has(n));
      if (tty === undefined) throw new KernelError('TTY_CAPACITY', `All ${this.maxTtys} terminals are in use. Close one you no longer need with close(tty), then open again.`);
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
    if (bytes > 16_384) {
      throw new KernelError(
        'TEXT_TOO_LONG',
        `The text is ${bytes} bytes; type() sends at most 16384 (tty.max_text_bytes). Send it in smaller parts (to write a file: type "cat > file", then each part, then C-d).`,
      );
    }
    // Simpler than the real rule (src/tty/type/news.ts): any unseen output anywhere refuses, in its words.
    const unseen = [...this.ttys.entries()].filter(([, t]) => t.unseen.length > 0);
    if (unseen.length > 0) {
      const what = ([, t]: [number, FakeTty]) => (t.unseen.length === 1 ? `a new line: \`${t.unseen[0]}\`` : `${t.unseen.length} new lines, the last \`${t.unseen.at(-1)}\``);
      const news =
        unseen.length === 1 ? `TTY ${unseen[0]![0]} has news you have not seen: ${what(unseen[0]!)}` : `TTYs ${unseen.map(([n]) => n).join(', ')} have news you have not seen: ${unseen.map((u) => `TTY ${u[0]}, ${what(u)}`).join('; ')}`;
      throw new KernelError('UNSEEN_OUTPUT', `${news}. Nothing was sent. Call wait() to see it, then type again.`);
    }
    if (tty.program !== input.expect) {
      throw new KernelError(
        'EXPECT_MISMATCH',
        `TTY ${input.tty} is running ${tty.program}, not ${input.expect}. Nothing was sent. Check its screen with wait(), then type again with expect: "${tty.program}".`,
      );
    }
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
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.timeoutMs);
        const onAbort = () => {
          clearTimeout(timer);
          this.waitsAborted += 1;
          resolve();
        };
        if (options.signal?.aborted) onAbort();
        else options.signal?.addEventListener('abort', onAbort, { once: true });
      });
      this.waitsBlocked -= 1;
      if (options.signal?.aborted) throw new Error('wait aborted');
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
