import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerInstance } from '../../../src/config/registry.js';
import type { TerminalObserver } from '../../../src/observe/terminal-observer.js';
import { recordTerminals } from '../../../src/server/terminals/record-terminals.js';
import { typeForPerson } from '../../../src/web/person-keys.js';
import { type Terminals, startTerminals, waitFor } from '../tty/helpers/terminals.js';
import { type WebProcess, chromiumAvailable, launchBrowser, screenshot, shareOperatorConfig, startWeb } from './web-helpers.js';
import { pollUntil } from '../../helpers/poll.js';
import { kernelSocketFor } from '../../helpers/kernel-socket.js';

const run = chromiumAvailable() ? describe : describe.skip;
const PER_INSTANCE = 10;

async function cardText(page: Page, id: string): Promise<string> {
  // The card's terminal buffer: xterm.js redraws a card only while it is scrolled into view.
  return page.evaluate((n) => {
    const term = (document.querySelector(`.card[data-id="${n}"]`) as unknown as { terminal?: { buffer: { active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined } } } } | null)?.terminal;
    if (!term) return '';
    const buffer = term.buffer.active;
    return Array.from({ length: buffer.length }, (_, i) => buffer.getLine(i)?.translateToString(true) ?? '').join('\n');
  }, id);
}

run('agent-kernel web with 20 live terminals in 2 instances (real chromium)', () => {
  let configDir: string;
  let web: WebProcess;
  let browser: Browser;
  const instances: Array<{ t: Terminals; recorder: TerminalObserver; kernel: Awaited<ReturnType<typeof kernelSocketFor>>; ttys: number[] }> = [];

  beforeAll(async () => {
    configDir = await mkdtemp(path.join(os.tmpdir(), 'ak-web-many-'));
    const env = { ...process.env, AGENT_KERNEL_CONFIG_DIR: configDir, AGENT_KERNEL_TOKEN: 'web-test-token-0123456789abcdef' };
    for (let i = 0; i < 2; i++) {
      const t = await startTerminals('host');
      const recorder = recordTerminals(t.manager, t.test.instance, 0);
      const kernel = await kernelSocketFor(t.manager, t.test.instance);
      await registerInstance(t.test.name, t.test.dataDir, env);
      await shareOperatorConfig(t.test.instance, env);
      const ttys: number[] = [];
      for (let n = 0; n < PER_INSTANCE; n++) {
        const { tty } = await t.manager.open();
        await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
        ttys.push(tty);
      }
      instances.push({ t, recorder, kernel, ttys });
    }
    web = await startWeb(env);
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    for (const { t, recorder, kernel } of instances) {
      await kernel.close();
      await t.cleanup();
      await recorder.close();
    }
    await rm(configDir, { recursive: true, force: true });
  });

  it('shows every terminal as a live card that updates within 2 s of new output', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const streams: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/live')) streams.push(r.url());
    });
    await page.goto(web.url);
    const ids = instances.flatMap(({ t, ttys }) => ttys.map((tty) => `${t.test.name}/${tty}`));
    expect(ids).toHaveLength(20);
    for (const id of ids) await pollUntil(async () => /[#$]/.test(await cardText(page, id)), `the prompt on card ${id}`, { timeoutMs: 20_000 });
    for (let round = 0; round < 2; round++) {
      const typedAt = new Map<string, number>();
      for (const { t, ttys } of instances) {
        for (const tty of ttys) {
          const id = `${t.test.name}/${tty}`;
          // Keys straight into the terminal (as a person with --write): the agent's rules would refuse a type while others have news.
          await typeForPerson(t.test.instance, tty, `echo card-${round}-$((${tty}*7))-${t.test.name.slice(-4)}\r`);
          typedAt.set(id, Date.now());
        }
      }
      const seenAfter = new Map<string, number>();
      await pollUntil(
        async () => {
          if (Date.now() - Math.min(...typedAt.values()) > 15_000) {
            await screenshot(page, 'overview-20-stuck');
            const missing = ids.filter((id) => !seenAfter.has(id));
            throw new Error(`cards not updated: ${missing.join(', ')}; one shows: ${await cardText(page, missing[0]!)}`);
          }
          for (const { t, ttys } of instances) {
            for (const tty of ttys) {
              const id = `${t.test.name}/${tty}`;
              if (seenAfter.has(id)) continue;
              if ((await cardText(page, id)).includes(`card-${round}-${tty * 7}-${t.test.name.slice(-4)}`)) seenAfter.set(id, Date.now() - typedAt.get(id)!);
            }
          }
          return seenAfter.size === ids.length;
        },
        `all 20 cards showing round ${round}`,
        { timeoutMs: 20_000, intervalMs: 20 },
      );
      const worst = Math.max(...seenAfter.values());
      console.log(`web view, 20 terminals: round ${round}: slowest card ${worst} ms after its output was typed (median ${[...seenAfter.values()].sort((a, b) => a - b)[10]} ms)`);
      expect(worst).toBeLessThan(2000);
    }
    // What a person sees at 1400x900 (xterm.js draws only the cards on screen).
    await screenshot(page, 'overview-20', false);
    // The page holds one stream however many terminals it shows.
    expect(streams).toHaveLength(1);
    await page.close();
  });
});
