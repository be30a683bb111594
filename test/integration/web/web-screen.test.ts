import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerInstance } from '../../../src/config/registry.js';
import type { TerminalObserver } from '../../../src/observe/terminal-observer.js';
import { recordTerminals } from '../../../src/server/terminals/record-terminals.js';
import type { TtyReport } from '../../../src/tty/api/types.js';
import { kernelSocketFor } from '../../helpers/kernel-socket.js';
import { pollUntil } from '../../helpers/poll.js';
import { type Terminals, startTerminals, waitFor } from '../tty/helpers/terminals.js';
import { type WebProcess, chromiumAvailable, launchBrowser, screenshot, shareOperatorConfig, startWeb } from './web-helpers.js';

/**
 * Each terminal is emulated once: the web view shows the screen the kernel's own emulator holds
 * (the one the agent's wait reads), not a second emulator's replay of the recording. In Chromium
 * at 1400x900, the page's terminal against the agent's view of the same terminal.
 */

const run = chromiumAvailable() ? describe : describe.skip;

interface PageCell {
  fg: number;
  bg: number;
  fgPalette: boolean;
  bgPalette: boolean;
  bold: boolean;
}

/** The page's full-size terminal: its visible rows as text, and the cells of one row. */
async function pageScreen(page: Page, cellsOfRow?: number): Promise<{ rows: string[]; cells: PageCell[] }> {
  return page.evaluate((row) => {
    type Cell = { getFgColor(): number; getBgColor(): number; isFgPalette(): boolean; isBgPalette(): boolean; isBold(): number };
    type Line = { translateToString(trim: boolean): string; length: number; getCell(x: number): Cell | undefined };
    type Term = { rows: number; buffer: { active: { baseY: number; getLine(y: number): Line | undefined } } };
    const term = (document.querySelector('.focus-screen') as unknown as { terminal?: Term } | null)?.terminal;
    if (!term) return { rows: [], cells: [] };
    const buffer = term.buffer.active;
    const rows = Array.from({ length: term.rows }, (_, y) => buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '');
    const line = row === undefined ? undefined : buffer.getLine(buffer.baseY + row);
    const cells = line
      ? Array.from({ length: line.length }, (_, x) => line.getCell(x)!).map((c) => ({ fg: c.getFgColor(), bg: c.getBgColor(), fgPalette: c.isFgPalette(), bgPalette: c.isBgPalette(), bold: Boolean(c.isBold()) }))
      : [];
    return { rows, cells };
  }, cellsOfRow);
}

/** pollUntil, whose failure says what was seen last. */
async function until(probe: () => Promise<boolean>, what: () => string, timeoutMs: number): Promise<void> {
  try {
    await pollUntil(probe, 'the page', { timeoutMs });
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${what()}`);
  }
}

/** Rows as the agent's full-screen report writes them: right-trimmed, trailing blank rows dropped. */
function asReport(rows: string[]): string {
  const out = rows.map((r) => r.trimEnd());
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

run('the web view shows each terminal as the kernel emulates it (real chromium, 1400x900)', () => {
  let configDir: string;
  let env: NodeJS.ProcessEnv;
  let t: Terminals;
  let recorder: TerminalObserver;
  let kernel: Awaited<ReturnType<typeof kernelSocketFor>>;
  let web: WebProcess;
  let browser: Browser;

  beforeAll(async () => {
    configDir = await mkdtemp(path.join(os.tmpdir(), 'ak-web-screen-'));
    env = { ...process.env, AGENT_KERNEL_CONFIG_DIR: configDir, AGENT_KERNEL_TOKEN: 'web-test-token-0123456789abcdef' };
    t = await startTerminals('host');
    // Recorded as a kernel records them (replays, and what the web view once replayed into an emulator of its own).
    recorder = recordTerminals(t.manager, t.test.instance, 0);
    kernel = await kernelSocketFor(t.manager, t.test.instance);
    await registerInstance(t.test.name, t.test.dataDir, env);
    await shareOperatorConfig(t.test.instance, env);
    web = await startWeb(env);
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    await kernel?.close();
    await t?.cleanup();
    await recorder?.close();
    await rm(configDir, { recursive: true, force: true });
  });

  async function openTerminal(): Promise<number> {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    return tty;
  }

  async function focus(tty: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${web.url}#/i/${t.test.name}/tty/${tty}`);
    await page.locator('.focus-screen .xterm-rows').waitFor();
    return page;
  }

  it('a full-screen program (vi): the page shows the screen the agent\'s wait shows, row for row', async () => {
    const tty = await openTerminal();
    const file = path.join(t.test.dataDir, 'notes.txt');
    await writeFile(file, Array.from({ length: 60 }, (_, i) => `line ${String(i + 1).padStart(2, '0')}: ${'abcdefghij'.repeat((i % 7) + 1)}`).join('\n') + '\n');
    await t.manager.type({ tty, expect: 'bash', text: `vi -u NONE -c 'set nu' -c 20 ${file}` });
    let report: TtyReport | undefined;
    await pollUntil(
      async () => {
        const result = await t.manager.wait({ timeoutMs: 3000 });
        report = result.changed.find((r) => r.tty === tty && r.fullScreen && r.text.includes('line 20')) ?? report;
        return report !== undefined;
      },
      'vi drawn, as the agent sees it',
      { timeoutMs: 30_000 },
    );
    const page = await focus(tty);
    let shown = '';
    await until(async () => (shown = asReport((await pageScreen(page)).rows)) === report!.text, () => `the page to show the agent's screen;\nagent:\n${report!.text}\npage:\n${shown}`, 15_000);
    await screenshot(page, 'screen-vi', false);
    await page.close();
    await t.manager.close(tty);
  }, 90_000);

  it('colours set before a long output: the page shows the colours and the last lines the agent\'s wait shows', async () => {
    const tty = await openTerminal();
    // Bold yellow on blue, set once, then 1.4 MB of lines in it: the colour is in force on every visible row.
    await t.manager.type({ tty, expect: 'bash', text: `printf '\\033[1;33;44m'; seq -f '%099g' 1 14000; printf 'END\\033[0m\\n'` });
    const seen = await waitFor(t.manager, tty, (text) => /^END$/m.test(text), 150_000);
    const agentLast = seen.split('\n').filter((l) => /^\d{99}$/.test(l)).slice(-5);
    expect(agentLast.map(Number)).toEqual([13996, 13997, 13998, 13999, 14000]);
    const page = await focus(tty);
    let rows: string[] = [];
    await until(async () => (rows = (await pageScreen(page)).rows).some((r) => r.trimEnd() === 'END'), () => `END on the page; it shows:\n${rows.join('\n')}`, 15_000);
    const end = rows.findIndex((r) => r.trimEnd() === 'END');
    expect(rows.slice(end - 5, end).map((r) => r.trimEnd())).toEqual(agentLast);
    // The row above END: its digits bold yellow (palette 3) on blue (palette 4), as in the terminal.
    const { cells } = await pageScreen(page, end - 1);
    const digits = cells.slice(0, 6);
    expect(digits).toEqual(Array.from({ length: 6 }, () => ({ fg: 3, bg: 4, fgPalette: true, bgPalette: true, bold: true })));
    await screenshot(page, 'screen-colour', false);
    await page.close();
  }, 180_000);
});
