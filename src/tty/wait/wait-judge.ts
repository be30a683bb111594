import { type Completion, judgeCompletion } from '../probe/completion.js';
import { askingFollower, promptText } from '../probe/input-wait.js';
import { isShell, normalizeProgram } from '../probe/program-name.js';
import { readsKeys } from '../terminal/terminal-sync.js';
import type { Tty } from '../terminal/tty.js';
import type { TtyContext } from '../terminal/tty-context.js';
import type { WaitReason } from '../api/types.js';
import { type UntilPattern, matchUntil } from '../terminal/until.js';

/** How long wait() gives a type() that was called at the same time to arrive. */
const IDLE_GRACE_MS = 400;
/** How long a new integrated shell may take to show its first prompt before silence counts. */
const FIRST_PROMPT_MS = 10_000;

/** A wait's own pattern: it ends when this terminal matches (or ends), whatever else happens. */
export interface WaitUntil {
  tty: Tty;
  pattern: UntilPattern;
}

/**
 * Is the wait that began at `started` over, and why? What the agent started (open, type)
 * must all be done; when it started nothing, the first terminal with news ends the wait.
 * A terminal with a pattern (the wait's `until`, or one set at open) is done only when its
 * screen matches or its program ends. undefined: keep waiting.
 */
export async function judgeWait(ctx: TtyContext, started: number, until?: WaitUntil): Promise<Judgement | undefined> {
  if (until) return judgePattern(until.tty, until.pattern);
  const ttys = ctx.ttys.all();
  const acted = ttys.filter((t) => t.actions.pending);
  const now = Date.now();
  const consider = acted.length > 0 ? acted : ttys.filter((t) => t.hasUnseen() || t.commands.running || (t.alive && t.program && !isShell(t.program)));
  if (consider.length === 0) return now - started >= IDLE_GRACE_MS ? { reason: 'idle' } : undefined;
  const done: Array<[Tty, WaitReason]> = [];
  const undecided: Tty[] = [];
  const asking: Array<[Tty, WaitReason]> = [];
  const matched = new Map<Tty, Judgement>();
  for (const tty of consider) {
    if (tty.until) {
      const judgement = judgeOwnPattern(tty, tty.until);
      if (judgement) {
        matched.set(tty, judgement);
        done.push([tty, judgement.reason]);
      }
      continue;
    }
    const verdict = await judgeTty(ctx, tty, now);
    if (verdict) done.push([tty, verdict]);
    // Waiting for input ends a wait for what the agent did, or for news it has not seen (not for an idle REPL).
    else if (tty.actions.pending || tty.hasUnseen()) undecided.push(tty);
  }
  for (const [tty, sample] of ctx.config.detect_input ? await ctx.inputWatch.waiting(undecided, now, ctx.host.fence?.bind(ctx.host)) : []) {
    // What came while the probe answered tells more: a command that ended is reported as finished.
    const verdict = await judgeTty(ctx, tty, Date.now());
    if (verdict === 'command-finished' || verdict === 'exited') {
      done.push([tty, verdict]);
      continue;
    }
    const follower = askingFollower(sample);
    if (follower) tty.asks(normalizeProgram(follower.leader), normalizeProgram(follower.name));
    tty.waitingForInput();
    done.push([tty, 'input']);
    // A program (or a shell's command: `read`) that asks, not a shell back at its prompt.
    if (tty.commands.running || !isShell(tty.program)) asking.push([tty, 'input']);
  }
  // Silence ended these before the probe confirmed (a loaded machine answers slowly; a fence waits behind a flood on
  // another terminal): a program that waits on the terminal is asking for input, and the agent gets its prompt; a
  // shell back at its own prompt stays settled.
  const settled = ctx.config.detect_input ? done.filter(([tty, reason]) => reason === 'settled' && (tty.commands.running || !isShell(tty.program))) : [];
  const waitingNow = settled.length > 0 ? await ctx.inputWatch.waitingAfterSilence(settled.map(([tty]) => tty)) : new Map();
  for (const entry of settled) {
    const sample = waitingNow.get(entry[0]);
    if (!sample) continue;
    const follower = askingFollower(sample);
    if (follower) entry[0].asks(normalizeProgram(follower.leader), normalizeProgram(follower.name));
    entry[1] = 'input';
    asking.push([entry[0], 'input']);
  }
  // What the agent started must all be done, unless a program asks for input: it cannot go on without the agent.
  const allDone = done.length === consider.length;
  if (acted.length > 0 ? !allDone && asking.length === 0 : done.length === 0) return undefined;
  const [first] = (allDone || acted.length === 0 ? done : asking).sort(([a], [b]) => a.number - b.number);
  if (!first) return undefined;
  const [tty, reason] = first;
  const byPattern = matched.get(tty);
  if (byPattern) return byPattern;
  return reason === 'input' ? { reason, input: { tty: tty.number, prompt: tty.emulator.alternateScreen ? '' : promptOf(tty) } } : { reason };
}

/** Why a wait ends; for `input`, which terminal waits at which prompt; for `matched`, what matched where. */
export interface Judgement {
  reason: WaitReason;
  input?: { tty: number; prompt: string };
  matched?: { tty: number; text: string };
}

/** A terminal's own pattern that fails (too slow) is dropped, so the next wait judges it as usual. */
function judgeOwnPattern(tty: Tty, pattern: UntilPattern): Judgement | undefined {
  try {
    return judgePattern(tty, pattern);
  } catch (error) {
    tty.until = undefined;
    throw error;
  }
}

function judgePattern(tty: Tty, pattern: UntilPattern): Judgement | undefined {
  const text = tty.alive ? matchUntil(pattern, tty) : undefined;
  if (text !== undefined) return { reason: 'matched', matched: { tty: tty.number, text } };
  return tty.alive ? undefined : { reason: 'exited' };
}

function promptOf(tty: Tty): string {
  const emulator = tty.emulator;
  const row = emulator.readRows(emulator.cursorAbs, emulator.cursorAbs + 1)[0]?.text ?? '';
  return promptText(row, emulator.cursorX);
}

/** Is what runs on this terminal done (undefined: still running)? */
async function judgeTty(ctx: TtyContext, tty: Tty, now: number): Promise<WaitReason | undefined> {
  // Its process ended and the exit status is on its way: report the end, not a quiet shell.
  if (tty.ending) return undefined;
  const since = Math.max(tty.actions.pending?.at ?? 0, tty.emulator.lastOutputAt);
  tty.commands.settleEnding(now, now - since);
  let verdict: Completion | 'input' = judgeCompletion({
    dead: !tty.alive,
    commandFinished: tty.actions.pending ? tty.commands.ends > tty.actions.pending.endsBefore : tty.commands.ends > tty.commands.reportedEnds,
    program: tty.program,
    alternateScreen: tty.emulator.alternateScreen,
    readingKeys: tty.readsKeys(),
    quietMs: now - since,
    settleMs: ctx.config.settle_ms,
  });
  // A shell the kernel started is ready at its first prompt (it may be slow to read its rc files).
  if (verdict === 'settled' && tty.actions.pending?.kind === 'open' && tty.actions.integrated && tty.commands.ends === 0 && now - tty.actions.pending.at < FIRST_PROMPT_MS) {
    verdict = 'running';
  }
  if (verdict === 'ask-termios') {
    tty.rememberReadsKeys(await readsKeys(ctx, tty));
    verdict = tty.readsKeys() ? 'settled' : 'running';
  }
  // A prompt without a command before it (the first one, an empty Enter): nothing finished, the shell waits.
  if (verdict === 'command-finished' && tty.commands.lastEnd?.durationMs === undefined) verdict = 'input';
  if (verdict === 'settled' || verdict === 'command-finished' || verdict === 'input') tty.waitingForInput();
  return verdict === 'running' ? undefined : verdict;
}
