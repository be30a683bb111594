import { access, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { DEFAULT_BUILTIN_TOOLS } from '../../../src/runner/harnesses/claude-code.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import { startTick } from '../../../src/runner/tick/tick.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { REAL_CLAUDE, type TickTestInstance, readJsonLines, tickTestInstance } from './tick-helpers.js';
import { pollUntil } from '../../helpers/poll.js';

// Each test starts a container and a harness; on a loaded 2-core machine that can take a while.
vi.setConfig({ testTimeout: 240_000 });

/**
 * Host processes (not the container's, which live on by design) whose command line mentions
 * `needle`: our data dir is in every process a tick starts.
 */
async function processesMentioning(needle: string): Promise<Array<{ pid: number; cmd: string }>> {
  const found: Array<{ pid: number; cmd: string }> = [];
  const ourNamespace = await readlink('/proc/self/ns/pid');
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    if ((await readlink(`/proc/${entry}/ns/pid`).catch(() => '')) !== ourNamespace) continue;
    const cmd = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(needle)) found.push({ pid: Number(entry), cmd: cmd.replace(/\0/g, ' ').trim() });
  }
  return found;
}

/**
 * The real Claude Code CLI (pinned devDependency), logged out: HOME and CLAUDE_CONFIG_DIR in a
 * temp dir, no API key. It must start our MCP server and report it connected, then fail
 * with "Not logged in", which is fatal: the instance is paused and nothing is left running.
 */
describeWithEngine('kernel-runner tick with the real Claude Code CLI (logged out)', () => {
  let t: TickTestInstance | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('gets our server connected, classifies "Not logged in" as fatal, pauses, and leaves no process', async () => {
    await access(REAL_CLAUDE);
    t = await tickTestInstance({ command: REAL_CLAUDE });
    // What the agent writes into its data repo, from inside its container, for Claude Code to find where it runs:
    // a project settings file whose hooks would run on the host, and a CLAUDE.md importing a host file.
    const canary = path.join(t.instance.paths.stateRoot, 'claude-project-hook-ran');
    const hook = JSON.stringify({ hooks: [{ type: 'command', command: `touch ${canary}` }] });
    const plant = [
      `mkdir -p '${t.dataDir}/.claude'`,
      `printf '%s' '{"hooks":{"SessionStart":[${hook}],"UserPromptSubmit":[${hook}]}}' > '${t.dataDir}/.claude/settings.json'`,
      `cp '${t.dataDir}/.claude/settings.json' '${t.dataDir}/.claude/settings.local.json'`,
      `printf '@%s\\n' '${t.instance.paths.operatorConfig}' > '${t.dataDir}/CLAUDE.md'`,
    ].join(' && ');
    const sandbox = await openSandbox(t.instance, { logger: silentLogger() });
    expect((await sandbox.run(['sh', '-c', plant])).exitCode).toBe(0);
    const running = await startTick(await t.reloaded(), { logger: t.logger, env: t.env });
    const outcome = await running.done;

    const lines = await readJsonLines(outcome.logFile);
    const status = lines.filter((l) => l.type === 'control_response').at(-1);
    expect(JSON.stringify(status)).toContain('"name":"agent-kernel","status":"connected"');
    const init = lines.find((l) => l.type === 'system' && l.subtype === 'init');
    expect(init?.mcp_servers).toEqual([{ name: 'agent-kernel', status: 'connected' }]);
    expect(init?.tools).toEqual(expect.arrayContaining(['mcp__agent-kernel__login', 'mcp__agent-kernel__open', 'mcp__agent-kernel__type', 'mcp__agent-kernel__wait', 'mcp__agent-kernel__close']));
    expect(init?.tools).not.toContain('Bash');
    // Its own tools run on the host: it gets only its task list. And it runs in a host-private folder, not the data repo.
    for (const tool of (init?.tools as string[]).filter((name) => !name.startsWith('mcp__'))) expect(DEFAULT_BUILTIN_TOOLS).toContain(tool);
    expect(init?.cwd).toBe(t.instance.paths.harnessCwd);
    await expect(access(canary)).rejects.toThrow();

    expect(outcome).toMatchObject({ status: 'failed', errorClass: 'fatal', paused: true, attempts: 1 });
    // Claude Code's own transcript of the session, copied beside ours.
    expect(await readFile(outcome.logFile.replace(/\.jsonl$/, '.session.jsonl'), 'utf8')).toContain(outcome.sessionId);
    // Our words, with the fix, wherever it is read: never Claude Code's interactive "Please run /login".
    const ours = `the model never ran: Claude Code has no credentials (it said: "Not logged in"); fix: claude setup-token, then kernel-runner secret set ${t.instance.name} CLAUDE_CODE_OAUTH_TOKEN`;
    expect(outcome.error).toBe(ours);
    expect((await readFile(t.instance.paths.paused, 'utf8')).startsWith(ours)).toBe(true);
    expect((await readJsonLines(outcome.logFile)).find((l) => l.event === 'tick-end')).toMatchObject({ status: 'failed', error_class: 'fatal', error: ours });
    await expect(startTick(await t.reloaded(), { logger: t.logger, env: t.env })).rejects.toThrow(/is paused: the model never ran: Claude Code has no credentials/);

    // No claude, no agent-kernel serve: every process we started mentions the data dir.
    await pollUntil(async () => (await processesMentioning(t!.dataDir)).length === 0, 'no process left', { timeoutMs: 10_000 }).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}: ${JSON.stringify(await processesMentioning(t!.dataDir))}`);
    });
  });
});
