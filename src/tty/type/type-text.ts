import { CodedError } from '../../errors.js';
import { classifyForeground, groupNames } from '../probe/input-wait.js';
import { type News, askingNews, otherNews, ownNews } from './news.js';
import { echoSettled } from './echo-settle.js';
import { sendPaste } from './paste-parts.js';
import { INTERRUPT_KEYS, parseTypedText } from '../host/keys.js';
import { isShell, programMatches } from '../probe/program-name.js';
import { syncAll } from '../terminal/terminal-sync.js';
import type { Tty } from '../terminal/tty.js';
import type { TtyContext } from '../terminal/tty-context.js';
import type { TypeInput, TypeResult } from '../api/types.js';
import { expectMismatch, textTooLong, unseenOutput } from '../api/tty-errors.js';

/** Send text or a key to a terminal, after checking that the agent has seen everything and knows what runs there. */
export async function typeText(ctx: TtyContext, input: TypeInput): Promise<TypeResult> {
  const tty = ctx.ttys.get(input.tty, ctx.config.max_ttys);
  const typed = parseTypedText(input.text);
  const bytes = Buffer.byteLength(input.text);
  if (bytes > ctx.config.max_text_bytes) throw textTooLong(bytes, ctx.config.max_text_bytes);
  const interrupting = typed.kind === 'key' && INTERRUPT_KEYS.has(typed.key);
  // Typed right after its last keys: their echo is judged once it is all there (a long paste is still being drawn).
  if (!interrupting) await echoSettled(ctx, tty);
  const states = await syncAll(ctx);
  const news = await unseenNews(ctx, tty, interrupting);
  if (news.length > 0) throw unseenOutput(news);
  const state = states.find((s) => s.id === tty.id);
  if (!state || state.dead) {
    throw new CodedError(
      'TTY_NOT_FOUND',
      `TTY ${tty.number}'s program has exited${state?.exitStatus === undefined ? '' : ` (status ${state.exitStatus})`}. Call wait() to see its last output; it is then closed. Open a new terminal with open().`,
      { details: { tty: tty.number } },
    );
  }
  const actual = tty.program;
  // Sampled just before the keys go out (did the program act on them?); a pipeline's programs
  // all run in the foreground, and the agent may name any of them (`seq 1000000 | less`: less).
  const before = await ctx.inputWatch.foreground(tty.state?.pid);
  const named = programMatches(input.expect, actual) || groupNames(before).some((name) => programMatches(input.expect, name));
  // C-c and C-z stop whatever runs under the shell the agent knows: naming the shell is enough.
  if (!named && !(interrupting && isShell(input.expect))) {
    throw expectMismatch(tty.number, input.expect, actual, { expectedShell: isShell(input.expect), actualShell: isShell(actual), asking: classifyForeground(before) === 'input' });
  }
  const enter = typed.kind !== 'key' && (input.enter ?? true);
  tty.acted('type', false, typed.kind === 'key' ? { key: typed.key } : { text: typed.text, enter });
  ctx.inputWatch.keysSent(tty, before);
  const modes = { bracketed: tty.emulator.bracketedPaste, applicationCursor: tty.emulator.applicationCursor };
  if (typed.kind === 'paste') await sendPaste(ctx, tty, typed.text, { enter, ...modes });
  else await ctx.host.send(tty.id, typed, { enter, ...modes });
  // A REPL ends an indented block at an empty line: a paste that ends inside one runs without a second call.
  if (enter && typed.kind === 'paste' && !isShell(tty.program) && /\n[ \t]+\S[^\n]*$/.test(typed.text)) {
    await ctx.host.send(tty.id, { kind: 'key', key: 'Enter' }, { enter: false, ...modes });
  }
  ctx.wake();
  if (typed.kind === 'key') return { tty: tty.number, sent: 'key', key: typed.key, bytes: 0, enter: false };
  return { tty: tty.number, sent: typed.kind, bytes: Buffer.byteLength(typed.text), enter };
}

/**
 * The refusal rule (news.ts): what the agent has not seen here (C-c and C-z always pass), and
 * on other terminals only what changes what to do; a change that counts only if its program now
 * asks for input is checked with one question to the probe for all of them.
 */
async function unseenNews(ctx: TtyContext, tty: Tty, interrupting: boolean): Promise<Array<{ tty: number; what: string }>> {
  const verdicts = ctx.ttys.all().map((t): [Tty, News | undefined] => [t, t === tty ? (interrupting ? undefined : ownNews(t)) : otherNews(t)]);
  const maybe = verdicts.filter(([t, v]) => v && 'ifAsking' in v && t.alive).map(([t]) => t);
  const asking = maybe.length > 0 ? await ctx.inputWatch.askingNow(maybe, Date.now()) : new Set<Tty>();
  return verdicts.flatMap(([t, v]) => {
    if (!v) return [];
    if ('what' in v) return [{ tty: t.number, what: v.what }];
    return asking.has(t) ? [{ tty: t.number, what: askingNews(t) }] : [];
  });
}
