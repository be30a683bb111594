#!/usr/bin/env node
/**
 * The hook command kernel-runner gives Claude Code in `--settings`:
 *   node dist/cli/hook.js <pre-compact|post-tool-use|stop> <runner socket>
 * Claude Code writes the hook input as JSON on stdin; this forwards it to the runner and
 * prints the runner's decision. Fail-open, except PreCompact, which blocks even when the
 * runner cannot be reached: a compacted context is what ticks exist to avoid.
 */
import { askRunner, HOOK_EVENT_KINDS, type HookEventKind, type HookReply } from '../runner/hooks/hook-channel.js';

const COMPACTION_BLOCK: HookReply = {
  stdout: JSON.stringify({ decision: 'block', reason: 'agent-kernel ends the tick instead of compacting the context.' }),
};

/** Stop hooks may run pre-stop hooks in the container (30 s each), so they get longer. */
const TIMEOUT_MS: Record<HookEventKind, number> = { 'pre-compact': 10_000, 'post-tool-use': 10_000, stop: 300_000 };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(): Promise<number> {
  const [kind, socketPath] = process.argv.slice(2);
  if (!kind || !HOOK_EVENT_KINDS.includes(kind as HookEventKind) || !socketPath) {
    process.stderr.write(`usage: hook-cli <${HOOK_EVENT_KINDS.join('|')}> <socket>\n`);
    return 0;
  }
  let input: unknown = {};
  try {
    input = JSON.parse((await readStdin()) || '{}');
  } catch {
    input = {};
  }
  const reply = await askRunner(socketPath, kind as HookEventKind, input, TIMEOUT_MS[kind as HookEventKind]);
  const decision = reply ?? (kind === 'pre-compact' ? COMPACTION_BLOCK : {});
  if (decision.stdout) process.stdout.write(decision.stdout + '\n');
  return decision.exitCode ?? 0;
}

process.exitCode = await main();
