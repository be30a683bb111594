import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { sendOperatorMessage } from '../../../../src/mail/operator-send.js';
import { loadState } from '../../../../src/state/runner-state.js';
import { type AgentStatus, queryStatusSocket, statusSocketPath } from '../../../../src/runner/watch/service/status-api.js';
import { describeWithEngine } from '../../../helpers/engine.js';
import { chromiumAvailable, launchBrowser, startWeb } from '../../web/web-helpers.js';
import { KERNEL_RUNNER_BIN, type TickTestInstance, readJsonLines, tickTestInstance } from '../tick-helpers.js';
import { pollUntil } from '../../../helpers/poll.js';

/** Polls for ticks: generous, the machine is shared; nothing here is timed. */
const LONG = 180_000;
const HISTORY_LIMIT = 1000;
/** About 400 numbered lines a second, until C-c. */
const PRINTER = `python3 -c "import time, itertools
for n in itertools.count(1):
    print(f'gap-{n}', flush=True)
    time.sleep(0.0025)"`;

interface ToolCall {
  session: string;
  tool: string;
  result: { structuredContent?: { changed?: Array<{ tty: number; diff: string; totalLines: number; elidedLines: number }> } };
}

/** The gap-N numbers in a piece of terminal text. */
function numbers(text: string): number[] {
  return [...text.matchAll(/^gap-(\d+)$/gm)].map((m) => Number(m[1]));
}

/**
 * The kernel between ticks, end to end: a real `kernel-runner watch` process (which runs and
 * supervises the instance's kernel), the fake claude as the harness of two ticks, a real
 * container. What tick 1 starts prints for the whole gap, far more than tty.history_limit; the
 * kernel reads it all meanwhile, so tick 2's first wait counts every line and none is gone, and a
 * person sees it happen in the terminal's files and in the web view.
 */
describeWithEngine('the kernel keeps the terminals between ticks', () => {
  let t: TickTestInstance | undefined;
  let watch: ChildProcess | undefined;

  afterEach(async () => {
    if (watch && watch.exitCode === null) {
      const exited = new Promise((r) => watch!.once('exit', r));
      watch.kill('SIGTERM');
      await exited;
    }
    watch = undefined;
    await t?.dispose();
    t = undefined;
  });

  it('a command started in tick 1 prints through the gap; tick 2 sees every line, and the screen file and the web view moved meanwhile', { timeout: 420_000 }, async () => {
    t = await tickTestInstance({}, { tty: { history_limit: HISTORY_LIMIT } });
    const results = path.join(t.home, 'tool-calls.jsonl');
    Object.assign(t.env, { FAKE_CLAUDE_RESULTS: results, FAKE_CLAUDE_COMMAND: PRINTER, FAKE_CLAUDE_EXPECT: 'python3' });
    await writeFile(t.instance.paths.startup, JSON.stringify({ terminals: [{ tty: 0 }] }));
    watch = spawn(process.execPath, [KERNEL_RUNNER_BIN, 'watch', t.name], { env: t.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    watch.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const status = async () => (await queryStatusSocket(statusSocketPath(t!.name, t!.env), `/v1/agents/${t!.name}`).catch(() => undefined))?.body as AgentStatus | undefined;
    await pollUntil(async () => (await status())?.kernel?.state === 'ready', 'the kernel ready under watch', { timeoutMs: 60_000 });

    // Tick 1 starts the printer on TTY 0 and ends; the printer goes on.
    await sendOperatorMessage(t.instance, { text: '[fake:start-command] start the long job' });
    await pollUntil(async () => (await loadState(t!.instance.paths.state)).last?.tick === 1, 'tick 1 to end', { timeoutMs: LONG });
    expect((await loadState(t.instance.paths.state)).last?.status).toBe('ok');
    const tick1 = (await readJsonLines(results)) as unknown as ToolCall[];
    const lastSeen = Math.max(...tick1.filter((c) => c.tool === 'wait').flatMap((c) => c.result.structuredContent?.changed?.flatMap((d) => numbers(d.diff)) ?? []));
    expect(lastSeen).toBeGreaterThan(0);

    // The gap: no tick runs; the kernel keeps the files and the recording (the web view's source) current.
    const screenFile = path.join(t.instance.paths.tty(0), 'screen');
    const screenNumber = async () => Math.max(0, ...numbers(await readFile(screenFile, 'utf8').catch(() => '')));
    const screenAtGapStart = await screenNumber();
    let webBefore = 0;
    let webAfter = 0;
    if (chromiumAvailable()) {
      const web = await startWeb(t.env);
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        await page.goto(`${web.url}#/i/${t.name}/terminals`);
        const rows = page.locator(`.card[data-id="${t.name}/0"] .xterm-rows`);
        await rows.waitFor();
        const shown = async () => Math.max(0, ...numbers((await rows.innerText()).replace(/\s+$/gm, '')));
        await pollUntil(async () => (webBefore = await shown()) > 0, 'the web view to show the printer', { timeoutMs: 20_000 });
        // Past anything written before the gap began (the page replays the recording's end first).
        await pollUntil(async () => (webAfter = await shown()) > Math.max(webBefore, screenAtGapStart) + 500, 'the web view to move on between ticks', { timeoutMs: 60_000 });
      } finally {
        await browser.close();
        await web.stop();
      }
    }
    // More lines than tmux keeps have been printed since tick 1 last looked.
    await pollUntil(async () => (await screenNumber()) > lastSeen + 3 * HISTORY_LIMIT, 'the printer to outrun tty.history_limit', { timeoutMs: LONG });
    expect(await screenNumber()).toBeGreaterThan(screenAtGapStart);
    if (chromiumAvailable()) expect(webAfter).toBeGreaterThan(screenAtGapStart);
    expect((await status())?.running).toBe(false);

    // Tick 2: its first wait shows what happened since the agent last looked: every line, counted, none gone.
    await sendOperatorMessage(t.instance, { text: '[fake:look] what did the job print?' });
    await pollUntil(async () => (await loadState(t!.instance.paths.state)).last?.tick === 2, 'tick 2 to end', { timeoutMs: LONG });
    const calls = (await readJsonLines(results)) as unknown as ToolCall[];
    const tick2 = calls.filter((c) => c.session !== tick1[0]!.session);
    const firstWait = tick2.find((c) => c.tool === 'wait')?.result.structuredContent?.changed?.find((d) => d.tty === 0);
    expect(firstWait, JSON.stringify(tick2.slice(0, 3))).toBeDefined();
    const shownNumbers = numbers(firstWait!.diff);
    expect(firstWait!.diff).not.toMatch(/gone/);
    expect(shownNumbers[0]).toBe(lastSeen + 1);
    const last = shownNumbers.at(-1)!;
    expect(firstWait!.totalLines).toBe(last - lastSeen);
    expect(firstWait!.totalLines).toBeGreaterThan(3 * HISTORY_LIMIT);
    expect(firstWait!.elidedLines).toBe(firstWait!.totalLines - shownNumbers.length);
    expect(stderr).not.toMatch(/kernel exited/);
  });
});
