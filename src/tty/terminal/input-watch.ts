import type { ForegroundProbe } from '../probe/foreground-probe.js';
import { type ForegroundSample, actedSince, classifyForeground, sampleSignature, shellAtPrompt, waitTimerMs } from '../probe/input-wait.js';
import type { Tty } from './tty.js';
import { settlesWithin } from '../../util/race-timeout.js';

/** Output must have stopped this long before the foreground is asked (not while it streams). */
const QUIET_MS = 4;
/**
 * Two answers this far apart, with no output and no wake-up in between, confirm a program is
 * waiting for input: what it printed before it blocked has had this long to arrive. (Output
 * arriving in between may carry the shell's marks: a flood behind, `seq` done, bash at its prompt.)
 * Used only where the host has no fence (the pty backend), or its fence failed.
 */
const CONFIRM_MS = 12;
/** How long a fence (TerminalHost.fence) may take in one pass; one that comes back later counts at the next. */
const FENCE_MS = 50;
/**
 * After a type, when the probe cannot tell that the program read the keys (no sample from
 * before them, schedstat unreadable, a program with a timer that drew nothing): how long the
 * terminal must be quiet before waiting for input counts.
 */
const TYPED_QUIET_MS = 250;
/**
 * After a type, how long a program that waits with a timer of unknown length must have been
 * quiet: vim's escape timeout (ttimeoutlen, 100 ms by default) and its exit both wait in a
 * timed poll on the terminal while the keys are still being acted on.
 */
const TIMED_QUIET_MS = 150;
/**
 * A timer this long is an idle wait (vim's updatetime, 4 s; top's refresh, 3 s), not the end of
 * a key: vim waits up to timeoutlen (1 s) for the rest of a key code (vim-tiny after Escape).
 */
const IDLE_TIMER_MS = 2000;
/** After a type, a program with a shorter timer must have been quiet its timer's length plus this. */
const TIMER_MARGIN_MS = 25;
/** A terminal quiet this long whose program waits at a prompt is asking the agent something. */
const ASKING_QUIET_MS = 200;

interface Seen {
  signature: string;
  at: number;
  bytes: number;
  /** Which answer of the probe this was (numbered in the order they came). */
  answer: number;
}

/**
 * Tells wait() that a terminal's foreground program has drawn and now waits for input:
 * the probe's answer says so twice, with no output and no wake-up of any process in between
 * (so keys in flight count as not yet), and what it printed before the first answer has
 * arrived: a fence sent after that answer came back (or, without one, CONFIRM_MS passed).
 */
export class InputWatch {
  private readonly seen = new WeakMap<Tty, Seen>();
  /** The foreground just before the agent's keys went out, by the pending action's time. */
  private readonly beforeKeys = new WeakMap<Tty, { at: number; sample: ForegroundSample }>();
  /** The first short timed wait seen after the keys (by the pending action's time). */
  private readonly timedAfterKeys = new WeakMap<Tty, { at: number; sample: ForegroundSample }>();
  /** When wait() should look again to confirm (ms from now); undefined: nothing to confirm. */
  recheckInMs: number | undefined;
  /** Answers of the probe so far; a fence sent after answer N came back covers answers up to N. */
  private answers = 0;
  private fencedUpTo = 0;
  private fenceInFlight: Promise<void> | undefined;
  /** The host has a fence: confirming waits for one, not for CONFIRM_MS. */
  private fencing = false;
  /** A fence failed (tmux gone, or it does not know the command): time confirms from then on. */
  private fenceFailed = false;

  constructor(
    private readonly probe: ForegroundProbe,
    /** When an answer came (tests pass their own clock). */
    private readonly clock: () => number = Date.now,
  ) {}

  get usable(): boolean {
    return this.probe.usable;
  }

  /**
   * The terminals of `ttys` whose program waits for input now, each with the sample that
   * confirmed it. With the host's `fence`, a first answer is confirmed at once when the
   * fence comes back soon: a second question goes out alongside it.
   */
  async waiting(ttys: readonly Tty[], now: number, fence?: () => Promise<void>): Promise<Map<Tty, ForegroundSample>> {
    this.recheckInMs = undefined;
    this.fencing = fence !== undefined && !this.fenceFailed;
    const ready = new Map<Tty, ForegroundSample>();
    const ask: Tty[] = [];
    for (const tty of ttys) {
      const pid = tty.state?.pid;
      if (!tty.alive || pid === undefined || pid <= 0) continue;
      const quiet = now - Math.max(tty.emulator.lastOutputAt, tty.actions.pending?.at ?? 0);
      if (quiet < QUIET_MS) {
        this.soon(QUIET_MS - quiet);
        continue;
      }
      ask.push(tty);
    }
    if (ask.length === 0 || !this.probe.usable) return ready;
    await this.ask(ask, ready);
    const unfenced = ask.filter((tty) => !ready.has(tty) && (this.seen.get(tty)?.answer ?? 0) > this.fencedUpTo);
    if (!fence || !this.fencing || unfenced.length === 0) return ready;
    const again = this.probe.sample(unfenced.map((t) => t.state?.pid ?? 0)).catch(() => undefined);
    if (!(await this.fenced(fence, this.answers))) return ready;
    await this.ask(unfenced, ready, again);
    return ready;
  }

  /**
   * Has a fence sent after answer `answer` come back, within FENCE_MS? One fence is on its way
   * at a time: output held up behind a flood (a paused client) holds it up too, and then the
   * next wait's pass looks again.
   */
  private async fenced(fence: () => Promise<void>, answer: number): Promise<boolean> {
    const deadline = Date.now() + FENCE_MS;
    for (let tries = 0; tries < 2 && this.fencedUpTo < answer; tries++) {
      if (!this.fenceInFlight) {
        const covers = this.answers;
        this.fenceInFlight = fence()
          .then(() => {
            this.fencedUpTo = Math.max(this.fencedUpTo, covers);
          })
          .catch(() => {
            this.fenceFailed = true;
          })
          .finally(() => {
            this.fenceInFlight = undefined;
          });
      }
      if (!(await settlesWithin(this.fenceInFlight, deadline - Date.now()))) break;
    }
    return this.fencedUpTo >= answer;
  }

  /** Ask the probe about `ttys` (or take its `answer` to that), and add those it confirms to `ready`. */
  private async ask(ttys: readonly Tty[], ready: Map<Tty, ForegroundSample>, answer?: Promise<Map<number, ForegroundSample> | undefined>): Promise<void> {
    const samples = await (answer ?? this.probe.sample(ttys.map((t) => t.state?.pid ?? 0)));
    const at = this.clock();
    const number = ++this.answers;
    for (const tty of ttys) {
      const sample = samples?.get(tty.state?.pid ?? 0);
      if (this.confirm(tty, sample, at, number) && sample) ready.set(tty, sample);
    }
  }

  /** The foreground of the pane whose first process is `panePid`, now; undefined when the probe cannot tell. */
  async foreground(panePid: number | undefined): Promise<ForegroundSample | undefined> {
    if (!this.probe.usable || panePid === undefined || panePid <= 0) return undefined;
    return (await this.probe.sample([panePid]))?.get(panePid);
  }

  /** The keys of the pending type go out now; `before` is the foreground sampled just before. */
  keysSent(tty: Tty, before: ForegroundSample | undefined): void {
    if (before && tty.actions.pending) this.beforeKeys.set(tty, { at: tty.actions.pending.at, sample: before });
    else this.beforeKeys.delete(tty);
  }

  /**
   * For type()'s refusal rule, in one question: the terminals of `ttys` whose program now
   * waits at a prompt (no timeout) after being quiet for ASKING_QUIET_MS.
   */
  async askingNow(ttys: readonly Tty[], now: number): Promise<Set<Tty>> {
    const ask = ttys.filter((t) => t.state?.pid !== undefined && now - t.emulator.lastOutputAt >= ASKING_QUIET_MS);
    const asking = new Set<Tty>();
    if (ask.length === 0 || !this.probe.usable) return asking;
    const samples = await this.probe.sample(ask.map((t) => t.state?.pid ?? 0));
    for (const tty of ask) if (classifyForeground(samples?.get(tty.state?.pid ?? 0)) === 'input') asking.add(tty);
    return asking;
  }

  /**
   * For a wait that silence ended (settle_ms without output): the terminals of `ttys` whose
   * foreground waits on the terminal now, by one answer of the probe. The silence already gave
   * what it printed time to arrive; the answer tells a prompt from a program that is merely quiet.
   * A shell back at its prompt while its command's end mark is on the way does not count.
   */
  async waitingAfterSilence(ttys: readonly Tty[]): Promise<Map<Tty, ForegroundSample>> {
    const waiting = new Map<Tty, ForegroundSample>();
    const ask = ttys.filter((t) => t.alive && (t.state?.pid ?? 0) > 0);
    if (ask.length === 0 || !this.probe.usable) return waiting;
    const samples = await this.probe.sample(ask.map((t) => t.state?.pid ?? 0));
    for (const tty of ask) {
      const sample = samples?.get(tty.state?.pid ?? 0);
      const verdict = classifyForeground(sample);
      if (!sample || (verdict !== 'input' && verdict !== 'input-timed')) continue;
      if (tty.commands.running && shellAtPrompt(sample)) continue;
      waiting.set(tty, sample);
    }
    return waiting;
  }

  private confirm(tty: Tty, sample: ForegroundSample | undefined, at: number, answer: number): boolean {
    const verdict = classifyForeground(sample);
    if (verdict !== 'input' && verdict !== 'input-timed') {
      this.seen.delete(tty);
      return false;
    }
    // A shell that marks its commands and is back at its prompt has its command's end on the way (a flood
    // behind it, its marks not read yet): the marks tell, not the probe.
    if (tty.commands.running && shellAtPrompt(sample)) {
      this.seen.delete(tty);
      return false;
    }
    const signature = sampleSignature(sample);
    const bytes = tty.emulator.bytesWritten;
    const before = this.seen.get(tty);
    const pending = tty.actions.pending;
    const stable = before !== undefined && before.signature === signature && before.bytes === bytes && (!pending || before.at > pending.at);
    if (!stable) {
      this.seen.set(tty, { signature, at, bytes, answer });
      this.soon(this.fencing ? FENCE_MS : CONFIRM_MS);
      return false;
    }
    // What it printed before the first answer must have arrived: a fence says so, or (without one) time.
    const arrived = this.fencing ? (before.answer <= this.fencedUpTo ? 0 : FENCE_MS) : CONFIRM_MS - (at - before.at);
    // Everything that came must be parsed too: the shell's marks may be in what the emulator has not read yet.
    const wait = Math.max(arrived, tty.emulator.backlog > 0 ? 1 : 0);
    if (wait > 0) {
      this.soon(wait);
      return false;
    }
    // After a type the program must have acted on the keys: it ran since they went out and waits on the
    // terminal again, without a timer or with an idle one. With a short timer (vim after Escape) it must
    // also have drawn since, and then outlived that timer (the timer may finish the keys): quiet longer
    // than it, or seen to wake from a timed wait after the keys (top redrawing more often than that).
    if (pending?.kind === 'type') {
      const timer = verdict === 'input-timed' ? waitTimerMs(sample) : undefined;
      const idle = verdict === 'input' || (timer !== undefined && timer >= IDLE_TIMER_MS);
      const acted = this.actedOnKeys(tty, sample, idle);
      const quiet = at - Math.max(tty.emulator.lastOutputAt, pending.at);
      const outlived = acted && !idle && this.outlivedTimedWait(tty, sample, pending.at);
      const needed = !acted ? TYPED_QUIET_MS : idle || outlived ? 0 : timer === undefined ? TIMED_QUIET_MS : timer + TIMER_MARGIN_MS;
      if (quiet < needed) {
        this.soon(needed - quiet);
        return false;
      }
    }
    return true;
  }

  /** Has the program run since the first timed wait seen after the keys? No keys came since, so its timer woke it. */
  private outlivedTimedWait(tty: Tty, sample: ForegroundSample | undefined, keysAt: number): boolean {
    const first = this.timedAfterKeys.get(tty);
    if (first?.at === keysAt) return actedSince(first.sample, sample);
    if (sample) this.timedAfterKeys.set(tty, { at: keysAt, sample });
    return false;
  }

  private actedOnKeys(tty: Tty, sample: ForegroundSample | undefined, idle: boolean): boolean {
    const pending = tty.actions.pending;
    const before = this.beforeKeys.get(tty);
    if (!pending || before?.at !== pending.at || !actedSince(before.sample, sample)) return false;
    return idle || tty.emulator.lastOutputAt > pending.at;
  }

  private soon(ms: number): void {
    const wait = Math.max(1, Math.ceil(ms));
    this.recheckInMs = this.recheckInMs === undefined ? wait : Math.min(this.recheckInMs, wait);
  }
}
