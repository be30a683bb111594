import { describeProcesses } from '../../tty/probe/process-tree.js';
import type { CloseResult, LostTty, OpenResult, TtyInfo, TtyReport, TypeResult, WaitResult } from '../../tty/api/types.js';
import type { NetworkSummary } from '../terminals/terminals.js';

/**
 * Pure rendering of tool results: the text the model reads and the matching
 * structuredContent. Nothing here does I/O.
 */

/**
 * The most terminal text one result carries (characters, all terminals together). Claude
 * Code replaces results over about 25k tokens with a file pointer; each diff appears in
 * the text and in structuredContent, so 2 x 20k characters stays well under that.
 */
export const MAX_RESULT_TEXT_CHARS = 20_000;

/** Share `budget` among texts: short ones keep all they have, long ones split the rest evenly. */
export function shareBudget(lengths: readonly number[], budget: number): number[] {
  const shares = lengths.map(() => 0);
  let left = budget;
  let open = lengths.map((_, i) => i);
  while (open.length > 0) {
    const fair = Math.floor(left / open.length);
    const fits = open.filter((i) => (lengths[i] ?? 0) <= fair);
    if (fits.length === 0) {
      for (const i of open) shares[i] = fair;
      break;
    }
    for (const i of fits) {
      shares[i] = lengths[i] ?? 0;
      left -= shares[i] ?? 0;
    }
    open = open.filter((i) => !fits.includes(i));
  }
  return shares;
}

/**
 * `text` cut to at most `max` characters: whole lines from the head and the tail with a
 * line between them saying how much was left out and where the full text is.
 */
export function capText(text: string, max: number, fullTextFile: string): { text: string; cutChars: number } {
  if (text.length <= max) return { text, cutChars: 0 };
  const marker = (n: number) => `[... ${n} characters left out to keep this result short; the full text is in ${fullTextFile}]`;
  const room = Math.max(0, max - marker(text.length).length - 2);
  const headRoom = Math.floor(room * 0.4);
  const tailRoom = room - headRoom;
  let head = text.slice(0, headRoom);
  let tail = text.slice(text.length - tailRoom);
  // Prefer whole lines when a line break is near.
  const headBreak = head.lastIndexOf('\n');
  if (headBreak > headRoom / 2) head = head.slice(0, headBreak);
  const tailBreak = tail.indexOf('\n');
  if (tailBreak >= 0 && tailBreak < tailRoom / 2) tail = tail.slice(tailBreak + 1);
  const cutChars = text.length - head.length - tail.length;
  return { text: `${head}\n${marker(cutChars)}\n${tail}`, cutChars };
}

/** A TtyReport as the wait tool returns it: its text, capped to the result size, is `diff`. */
export type TerminalDiff = Omit<TtyReport, 'text'> & {
  diff: string;
  /** Characters the server's size cap left out of `diff`, on top of elidedLines. */
  cutChars: number;
};

export interface WaitStructured {
  [key: string]: unknown;
  reason: WaitResult['reason'];
  input?: WaitResult['input'];
  matched?: WaitResult['matched'];
  elapsedMs: number;
  changed: TerminalDiff[];
  open: Array<{ tty: number; program: string; alive: boolean }>;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const REASON_TEXT: Record<WaitResult['reason'], string> = {
  'command-finished': 'a command finished',
  exited: 'a terminal exited',
  settled: 'output settled',
  timeout: 'timed out',
  idle: 'nothing was running',
  input: 'waiting for input',
  matched: 'matched',
};

function why(result: WaitResult): string {
  if (result.reason === 'matched' && result.matched) return `TTY ${result.matched.tty} matched: \`${result.matched.text.replace(/`/g, "'")}\``;
  if (result.reason !== 'input' || !result.input) return REASON_TEXT[result.reason];
  const { tty, prompt } = result.input;
  return `TTY ${tty} waiting for input${prompt ? `: \`${prompt.replace(/`/g, "'")}\`` : ''}`;
}

function headerParts(report: TerminalDiff): string[] {
  const parts = [`TTY ${report.tty}`, report.program];
  if (!report.alive) parts.push(report.exitCode === undefined ? 'exited' : `exited with ${report.exitCode}`);
  else if (report.exitCode !== undefined) parts.push(`exit ${report.exitCode}`);
  if (report.durationMs !== undefined) parts.push(seconds(report.durationMs));
  if (report.fullScreen) parts.push('full screen');
  return parts;
}

function header(report: TerminalDiff): string {
  return `=== ${headerParts(report).join(' | ')} ===`;
}

/**
 * One terminal changed and the reason is about it: one line says both (the exit code and
 * duration already say a command finished or a program ended).
 */
function singleHeader(result: WaitResult, report: TerminalDiff): string | undefined {
  const about = result.input?.tty ?? result.matched?.tty ?? report.tty;
  if (about !== report.tty) return undefined;
  const parts = headerParts(report);
  if (result.reason === 'input') parts.push(result.input?.prompt ? `waiting for input: \`${result.input.prompt.replace(/`/g, "'")}\`` : 'waiting for input');
  else if (result.reason === 'matched' && result.matched) parts.push(`matched: \`${result.matched.text.replace(/`/g, "'")}\``);
  else if (result.reason !== 'command-finished' && result.reason !== 'exited') parts.push(REASON_TEXT[result.reason]);
  return `${parts.join(' | ')} (waited ${seconds(result.elapsedMs)})`;
}

function describeOpen(open: WaitStructured['open']): string {
  if (open.length === 0) return 'No terminal is open: call open() to start one.';
  return `Open terminals: ${open.map((t) => `${t.tty} ${t.program}${t.alive ? '' : ' (exited)'}`).join(', ')}.`;
}

export function renderWait(result: WaitResult, budget = MAX_RESULT_TEXT_CHARS): { text: string; structured: WaitStructured } {
  const shares = shareBudget(
    result.changed.map((r) => r.text.length),
    budget,
  );
  const changed = result.changed.map((report: TtyReport, i): TerminalDiff => {
    const capped = capText(report.text, shares[i] ?? 0, report.files.scrollback);
    return {
      tty: report.tty,
      program: report.program,
      alive: report.alive,
      ...(report.exitCode === undefined ? {} : { exitCode: report.exitCode }),
      ...(report.durationMs === undefined ? {} : { durationMs: report.durationMs }),
      fullScreen: report.fullScreen,
      diff: capped.text.replace(/[ \t]+$/gm, ''),
      totalLines: report.totalLines,
      elidedLines: report.elidedLines,
      cutChars: capped.cutChars,
      files: report.files,
      ...(report.archivedTo === undefined ? {} : { archivedTo: report.archivedTo }),
    };
  });
  const single = changed.length === 1 && changed[0] ? singleHeader(result, changed[0]) : undefined;
  const lines = single ? [] : [`Waited ${seconds(result.elapsedMs)} (${why(result)}).`];
  if (changed.length === 0) lines.push('Nothing new on any terminal.');
  for (const report of changed) {
    lines.push(single ?? header(report));
    if (report.diff.length > 0) lines.push(report.diff.replace(/\n$/, ''));
    else lines.push(report.fullScreen ? '(empty screen)' : '(no new output)');
    if (report.archivedTo) lines.push(`[TTY ${report.tty} ended and was closed; its scrollback is archived at ${report.archivedTo}]`);
  }
  // The list of terminals when there is no news, or a terminal ended: otherwise the headers say what runs (structuredContent always has it).
  if (changed.length === 0 || changed.some((c) => !c.alive)) lines.push(describeOpen(result.open));
  return {
    text: lines.join('\n'),
    structured: { reason: result.reason, ...(result.input ? { input: result.input } : {}), ...(result.matched ? { matched: result.matched } : {}), elapsedMs: result.elapsedMs, changed, open: result.open },
  };
}

export interface LoginSummary {
  /** false: no tick runs now (work between ticks); `tick` is then the last one. */
  inTick?: boolean;
  [key: string]: unknown;
  tick: number;
  instance: string;
  sandbox: string;
  capacity: { used: number; max: number };
  opened: Array<{ tty: number; command: string }>;
  adopted: number[];
  lost: LostTty[];
  terminals: Array<{ tty: number; program: string; alive: boolean; unseenLines: number }>;
  unseen: Array<{ tty: number; lines: number }>;
  persistent: boolean;
  /** Startup terminals that could not be opened, with why. */
  startupErrors: Array<{ tty: number; error: string }>;
  alreadyLoggedIn: boolean;
  /** agent: this session's waits mark output seen and it may act; observer: it watches (see agent-role.ts). */
  role: 'agent' | 'observer';
  /** The instance's network policy; absent on the host backend. */
  network?: NetworkSummary | undefined;
  /** This tick's changed Containerfile did not build: the failing step and its output. */
  buildFailed?: { step: string; output: string[]; error: string };
}

/** Pure: the login line about the network, in the agent's terms. */
export function renderNetwork(network: NetworkSummary): string {
  if (network.policy === 'none') return 'Network: none (this computer has no network at all).';
  if (network.policy === 'open') return 'Network: open (no restrictions).';
  return `Network: allowlist, ${network.allowed} destination${network.allowed === 1 ? '' : 's'} allowed through the proxy already set in HTTP_PROXY/HTTPS_PROXY (including the package sources, so apt-get works); everything else is refused, and wait() reports each refusal.`;
}

/** What an observing session is told at login and when it tries to act. */
export const OBSERVING =
  'You are observing: another session is the agent (its waits mark output seen; it opens, types and closes). Your wait() shows what the agent has not seen yet and marks nothing seen; open, type and close are refused. To act instead, call login({ observe: false }): that session then observes.';

/** Pure: which tick this session works in, truthfully: none runs between ticks (`tick` is then the last one). */
export function tickLabel(summary: Pick<LoginSummary, 'tick' | 'inTick'>): string {
  if (summary.inTick !== false) return `tick ${summary.tick}`;
  return summary.tick === 0 ? 'no tick (none has run yet)' : `between ticks (no tick runs; the last was tick ${summary.tick})`;
}

export function renderLogin(summary: LoginSummary): string {
  const lines = [
    `Logged in to instance ${summary.instance}, ${tickLabel(summary)}${summary.alreadyLoggedIn ? ' (already logged in; nothing was reopened)' : ''}.`,
    `Sandbox: ${summary.sandbox}. Terminals in use: ${summary.capacity.used} of ${summary.capacity.max}.`,
  ];
  if (summary.network) lines.push(renderNetwork(summary.network));
  if (summary.terminals.length > 0) {
    lines.push(
      `Open terminals: ${summary.terminals.map((t) => `${t.tty} ${t.program}${t.alive ? '' : ' (exited)'}`).join(', ')}.`,
    );
  }
  if (summary.opened.length > 0) lines.push(`Opened from startup.json: ${summary.opened.map((t) => `TTY ${t.tty} (${t.command})`).join(', ')}.`);
  if (summary.adopted.length > 0) lines.push(`Still running from before: TTY ${summary.adopted.join(', ')}.`);
  for (const lost of summary.lost) {
    const how = summary.persistent ? 'Lost in a container restart' : 'Ended with the previous server';
    lines.push(`${how}: TTY ${lost.tty} (${lost.command}); its last scrollback is in ${lost.scrollbackPrev}.`);
  }
  for (const failure of summary.startupErrors) lines.push(`Could not open TTY ${failure.tty} from startup.json: ${failure.error}`);
  if (summary.buildFailed) lines.push(...renderBuildFailed(summary.buildFailed));
  if (!summary.persistent) lines.push('These terminals are not persistent: they end when this server stops.');
  if (summary.role === 'observer') {
    if (summary.unseen.length > 0) lines.push(`Not seen by the agent yet: ${summary.unseen.map((u) => `TTY ${u.tty} (${u.lines} line${u.lines === 1 ? '' : 's'})`).join(', ')}.`);
    lines.push(OBSERVING);
    return lines.join('\n');
  }
  if (summary.unseen.length > 0) {
    lines.push(
      `Unseen output: ${summary.unseen.map((u) => `TTY ${u.tty} (${u.lines} line${u.lines === 1 ? '' : 's'})`).join(', ')}. Call wait() to see it; type() is refused until you have.`,
    );
  } else {
    lines.push('No unseen output.');
  }
  lines.push('Next: wait() to look, type(tty, expect, text) to act. Tip: call type and wait as parallel tool calls.');
  return lines.join('\n');
}

function renderBuildFailed(failed: { step: string; output: string[]; error: string }): string[] {
  return [
    `Your system/container/Containerfile did not build at this tick's start${failed.step ? `, at ${failed.step}` : ''}: ${failed.error.split('\n')[0] ?? ''}`,
    ...(failed.output.length > 0 ? ['Its last output:', ...failed.output.slice(-15).map((line) => `  ${line}`)] : []),
    'Your terminals run in the container as it was, from the image before. Fix the Containerfile; the next tick builds it again.',
  ];
}

export function renderOpen(result: OpenResult): string {
  return `Opened TTY ${result.tty} running ${result.command} (${result.capacity.used} of ${result.capacity.max} in use). Call wait() to see its first screen.`;
}

/** Short: the agent knows what it typed (structuredContent has the byte count). */
export function renderType(result: TypeResult): string {
  if (result.sent === 'key') return `Sent ${result.key ?? 'a key'} to TTY ${result.tty}.`;
  return `${result.sent === 'paste' ? 'Pasted' : 'Typed'} into TTY ${result.tty}${result.enter ? '' : ', no Enter'}.`;
}

export function renderClose(result: CloseResult): string {
  const ended = result.ended?.length ? ` Ended ${result.ended.length} process${result.ended.length === 1 ? '' : 'es'}: ${describeProcesses(result.ended)}.` : '';
  return `Closed TTY ${result.tty}; its scrollback is archived at ${result.archivedTo} (${result.capacity.used} of ${result.capacity.max} in use).${ended}`;
}

/** Terminals as `ls` and `login` show them. */
export function unseenOf(list: readonly TtyInfo[]): Array<{ tty: number; lines: number }> {
  return list.filter((t) => t.unseenLines > 0).map((t) => ({ tty: t.tty, lines: t.unseenLines }));
}
