#!/usr/bin/env node
/**
 * The hook command kernel-runner gives Claude Code in `--settings`:
 *   node dist/cli/hook.js <pre-compact|post-tool-use|stop> <runner socket>
 * Claude Code writes the hook input as JSON on stdin; this forwards it to the runner and
 * prints the runner's decision. Fail-open, except PreCompact, which blocks even when the
 * runner cannot be reached: a compacted context is what ticks exist to avoid.
 */
import { text } from 'node:stream/consumers';
import { describeError } from '../errors.js';
import { askRunner, HOOK_EVENT_KINDS, type HookEventKind, type HookReply } from '../runner/hooks/hook-channel.js';
import { parseCommandArgs, usageError } from './commands/args.js';
import { err } from './commands/command.js';

const COMPACTION_BLOCK: HookReply = {
  stdout: JSON.stringify({ decision: 'block', reason: 'agent-kernel ends the tick instead of compacting the context.' }),
};

/** Stop hooks may run pre-stop hooks in the container (30 s each), so they get longer. */
const TIMEOUT_MS: Record<HookEventKind, number> = { 'pre-compact': 10_000, 'post-tool-use': 10_000, stop: 300_000 };

const USAGE = `node dist/cli/hook.js <${HOOK_EVENT_KINDS.join('|')}> <runner socket>`;

/** The hook and the runner's socket, as the settings kernel-runner wrote give them. */
function parseHookArgs(args: readonly string[]): { kind: HookEventKind; socketPath: string } {
  const [kind, socketPath] = parseCommandArgs(args, { usage: USAGE, options: {}, positionals: { min: 2, max: 2 } }).positionals as [string, string];
  if (!HOOK_EVENT_KINDS.includes(kind as HookEventKind)) throw usageError(USAGE, `Unknown hook ${JSON.stringify(kind)}.`);
  return { kind: kind as HookEventKind, socketPath };
}

async function main(): Promise<number> {
  let kind: HookEventKind;
  let socketPath: string;
  try {
    ({ kind, socketPath } = parseHookArgs(process.argv.slice(2)));
  } catch (error) {
    // Fail-open: a hook command kernel-runner did not write blocks nothing.
    err(`agent-kernel hook: ${describeError(error)}\n`);
    return 0;
  }
  let input: unknown = {};
  try {
    input = JSON.parse((await text(process.stdin)) || '{}');
  } catch {
    input = {};
  }
  const reply = await askRunner(socketPath, kind, input, TIMEOUT_MS[kind]);
  const decision = reply ?? (kind === 'pre-compact' ? COMPACTION_BLOCK : {});
  if (decision.stdout) process.stdout.write(decision.stdout + '\n');
  return decision.exitCode ?? 0;
}

process.exitCode = await main();
