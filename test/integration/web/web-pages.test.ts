import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoInstance, demoInstance, startDemoKernel } from './demo-instance.js';
import { type WebProcess, chromiumAvailable, launchBrowser, screenshot, startWeb } from './web-helpers.js';
import { pollUntil } from '../../helpers/poll.js';

/**
 * Every page of the web view, on an instance made as an operator makes one (demo-instance.ts:
 * three ticks of the fake Claude Code, recordings, events, messages), in Chromium at 1400x900.
 * With WEB_SCREENSHOTS=1 each page's screenshot is also written to docs/web/ (the README's).
 */

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'web');
const run = chromiumAvailable() ? describe : describe.skip;

/** A cast file: its header (begun at `start`, epoch seconds) and events. */
function cast(start: number, events: Array<[number, 'o' | 'm', string]>): string {
  return [JSON.stringify({ version: 2, width: 100, height: 30, timestamp: start, title: 'planted' }), ...events.map((e) => JSON.stringify(e))].join('\n') + '\n';
}

/**
 * What a demo cannot make on demand: tick 9's two recordings (TTY 2 began a minute before TTY 7;
 * two commands that took 1.5 s and 250 ms, a 20 s pause between them) and its transcript as
 * Claude Code writes one that ends with error_during_execution after an interrupt.
 */
async function plant(demo: DemoInstance): Promise<void> {
  const recordings = path.join(demo.stateDir, 'logs', 'recordings');
  const start = Math.floor(Date.now() / 1000) - 3600;
  await writeFile(
    path.join(recordings, 'tty_2-tick-009.cast'),
    cast(start, [
      [0.1, 'o', '$ '],
      [0.15, 'o', 'make build\r\n'],
      [0.2, 'm', '$ make build'],
      [0.3, 'o', 'compiling...\r\n'],
      [1.7, 'm', 'exit 0 after 1500 ms'],
      [1.8, 'o', 'built.\r\n$ '],
      [21.75, 'o', 'make test\r\n'],
      [21.8, 'm', '$ make test'],
      [21.9, 'o', '1 failed\r\n'],
      [22.05, 'm', 'exit 2 after 250 ms'],
      [22.1, 'o', '$ '],
    ]),
  );
  await writeFile(path.join(recordings, 'tty_7-tick-009.cast'), cast(start + 60, [[0.1, 'o', '$ ']]));
  const at = (s: number) => new Date((start + s) * 1000).toISOString();
  const prompt = 'Find what fills the disk.\n\nMessages that arrived for you.\n\n--- message 1 of 2 ---\nNotice: tick 8 ended abnormally (failed). Check what it left unfinished.\n\n--- message 2 of 2 ---\nFrom: the operator\n| clean /var/tmp too';
  const lines = [
    { type: 'kernel_runner', tick: 9, time: at(0), event: 'tick-start', trigger: 'manual', messages: 2 },
    { type: 'kernel_runner', tick: 9, time: at(0.1), event: 'attempt-start', attempt: 1, command: 'claude' },
    { type: 'kernel_runner', tick: 9, time: at(1), event: 'prompt', text: prompt },
    { received_at: at(1.1), type: 'system', subtype: 'init', model: 'claude-test', mcp_servers: [{ name: 'agent-kernel', status: 'connected' }] },
    { received_at: at(1.2), type: 'user', message: { role: 'user', content: prompt } },
    { received_at: at(2), type: 'assistant', message: { model: 'claude-test', content: [{ type: 'tool_use', id: 't1', name: 'mcp__agent-kernel__type', input: { tty: 0, expect: 'bash', text: 'du -sh /var/*' } }], usage: { input_tokens: 10, output_tokens: 5 } }, parent_tool_use_id: null },
    { received_at: at(3), type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'Typed into TTY 0.' }] }] } },
    { received_at: at(4), type: 'user', message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user]' }] } },
    { received_at: at(5), type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 2, total_cost_usd: 0.01 },
    { type: 'kernel_runner', tick: 9, time: at(5.1), event: 'attempt-end', attempt: 1, exit_code: 1, signal: null, tool_calls: 1, turns: 2 },
  ];
  await writeFile(path.join(demo.stateDir, 'logs', 'tick-009.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

run('the web view, page by page (real chromium, a demo instance)', () => {
  let root: string;
  let demo: DemoInstance;
  let web: WebProcess;
  let browser: Browser;
  let kernel: { stop(): Promise<void> } | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ak-web-pages-'));
    demo = await demoInstance(root);
    await plant(demo);
    // The terminals' screens come from the instance's kernel, as under watch.
    kernel = await startDemoKernel(demo);
    web = await startWeb({ ...demo.env, AGENT_KERNEL_TOKEN: 'web-pages-token-0123456789abcdef' });
    browser = await launchBrowser();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    await kernel?.stop();
    await rm(root, { recursive: true, force: true });
  });

  async function open(hash: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${web.url}${hash}`);
    return page;
  }

  /** The test's screenshot, and the README's when WEB_SCREENSHOTS=1 (the viewport, as a person sees it). */
  async function shoot(page: Page, name: string): Promise<void> {
    const file = await screenshot(page, `page-${name}`, false);
    if (process.env.WEB_SCREENSHOTS === '1') {
      await mkdir(DOCS, { recursive: true });
      await copyFile(file, path.join(DOCS, `${name}.png`));
    }
  }

  it('recordings: the Commands column shows the commands (no [object HTMLElement]), rows newest first', async () => {
    const page = await open(`#/i/${demo.name}/recordings`);
    await page.locator('table tbody tr').first().waitFor();
    const text = await page.locator('table').innerText();
    expect(text).not.toContain('[object');
    expect(text).toContain('echo fake-claude-was-here');
    // Planted: in tick 9, TTY 2 began a minute before TTY 7 (the list used to go by TTY number).
    const files = await page.locator('table tbody tr td:first-child a').evaluateAll((links) => links.map((a) => decodeURIComponent(a.getAttribute('href')!.split('/').at(-1)!)));
    expect(files.indexOf('tty_7-tick-009.cast')).toBeLessThan(files.indexOf('tty_2-tick-009.cast'));
    const started = await page.evaluate(() => fetch(`/api/instances/demo/recordings`).then((r) => r.json()).then((list: Array<{ started: string }>) => list.map((r) => Date.parse(r.started))));
    expect(started).toEqual([...started].sort((a, b) => b - a));
    await page.close();
  });

  it('transcript: the prompt once, after the session started; an error on red in words; one tool count, plural right; messages counted from the prompt; the interrupt is the harness\'s', async () => {
    const page = await open(`#/i/${demo.name}/tick/9`);
    await page.locator('.log .line.result').waitFor();
    const log = page.locator('.log');
    const lines = await log.locator('.line').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ')));
    expect(lines.filter((l) => l.includes('Find what fills the disk.'))).toHaveLength(1);
    const started = lines.findIndex((l) => l.includes('session started'));
    const prompt = lines.findIndex((l) => l.includes('Find what fills the disk.'));
    expect(started).toBeGreaterThanOrEqual(0);
    expect(prompt).toBeGreaterThan(started);
    expect(lines[prompt]).toContain('prompt, with 1 message and 1 notice');
    const text = await log.innerText();
    expect(text).not.toMatch(/message\(s\)/);
    expect(text).not.toMatch(/tool calls, \d+ turns/);
    const result = page.locator('.log .line.result');
    expect(await result.getAttribute('class')).toContain('failed');
    const [r, g] = await result.evaluate((el) => getComputedStyle(el).backgroundColor.match(/[\d.]+/g)!.map(Number));
    expect(r, 'the error row is not on green').toBeGreaterThan(g!);
    expect(await result.innerText()).toContain('stopped before the agent finished');
    expect(await page.locator('.summary-bar .result').innerText()).not.toBe('error_during_execution');
    expect(await page.locator('.summary-bar .tool-calls').innerText()).toBe('1 tool call');
    const interrupt = page.locator('.log .line', { hasText: '[Request interrupted by user]' });
    expect(await interrupt.locator('.who').innerText()).toBe('HARNESS');
    await page.close();
    // A real tick's transcript: its prompt once.
    const real = await open(`#/i/${demo.name}/tick/2`);
    await real.locator('.log .line.result').waitFor();
    const realLines = await real.locator('.log .line').evaluateAll((els) => els.map((e) => e.textContent ?? ''));
    expect(realLines.filter((l) => l.includes('This is a new tick.'))).toHaveLength(1);
    expect(realLines.join('\n')).toContain('prompt, with 1 message');
    await real.close();
  });

  it('events: a table with one-line dates, readable fields without host paths, recordings linked, waiting-for-input folded', async () => {
    const page = await open(`#/i/${demo.name}/events`);
    await page.locator('table.events tr[data-type="tick.ended"]').first().waitFor();
    expect(await page.locator('table.events th').allInnerTexts()).toEqual(['Time', 'Tick', 'Event', 'What happened']);
    const cell = page.locator('table.events tbody tr:not([hidden]) td').first();
    expect(await cell.evaluate((el) => getComputedStyle(el).whiteSpace)).toBe('nowrap');
    const visible = await page.locator('table.events tbody').innerText();
    expect(visible).not.toContain(root);
    expect(visible).not.toMatch(/\w+=\S/);
    expect(visible).toContain('$ echo fake-claude-was-here');
    const replay = page.locator('tr[data-type="command.finished"] a.recording').first();
    expect(await replay.getAttribute('href')).toMatch(/^#\/i\/demo\/replay\/tty_\d-tick-00\d\.cast$/);
    // The flood is folded: hidden until asked for, and counted.
    const waiting = page.locator('tr[data-type="tty.waiting-for-input"]');
    expect(await waiting.count()).toBeGreaterThan(0);
    expect(await waiting.evaluateAll((rows) => rows.every((r) => (r as HTMLElement).hidden))).toBe(true);
    await page.locator('input.show-folded').check();
    expect(await waiting.evaluateAll((rows) => rows.every((r) => !(r as HTMLElement).hidden))).toBe(true);
    await page.close();
  });

  it('replay: a first frame before play, the control bar with length and progress in view, real durations per command', async () => {
    const page = await open(`#/i/${demo.name}/replay/tty_2-tick-009.cast`);
    await page.locator('.ap-player').waitFor();
    await pollUntil(async () => (await page.locator('.ap-term').innerText().catch(() => '')).includes('compiling...'), 'the first frame', { timeoutMs: 10_000 });
    const bar = page.locator('.ap-control-bar');
    expect(await bar.isVisible()).toBe(true);
    const box = (await bar.boundingBox())!;
    expect(box.y + box.height, 'the control bar within the window').toBeLessThanOrEqual(900);
    expect(await bar.evaluate((el) => getComputedStyle(el).opacity)).toBe('1');
    expect(await page.locator('.ap-progressbar').count()).toBe(1);
    expect(await page.locator('.replay-facts .length').innerText()).toMatch(/^0:0\d to play$/);
    const commands = await page.locator('.commands li').allInnerTexts();
    expect(commands).toHaveLength(2);
    expect(commands[0]).toMatch(/^0:00\s*make build\s*exit 0\s*1\.5 s$/);
    // 21.8 s into the recording, 3.6 s on the player's clock (the 20 s pause plays as 2 s).
    expect(commands[1]).toMatch(/^0:03\s*make test\s*exit 2\s*250 ms$/);
    await page.close();
  });

  it('mail: what is queued and delivered, for whom and from whom; an unknown instance gets a page that says so', async () => {
    const page = await open(`#/i/${demo.name}/mail`);
    await page.locator('table.mail tbody tr').first().waitFor();
    const rows = await page.locator('table.mail tbody tr').allInnerTexts();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/operator \(alice\)\s*→\s*demo[\s\S]*rotate the logs[\s\S]*queued/);
    expect(rows[1]).toMatch(/operator\s*→\s*demo[\s\S]*disk usage[\s\S]*delivered in tick 2/);
    expect(await page.locator('.mail-facts').innerText()).toContain("1 waiting for demo's model");
    expect(await page.locator('button.withdraw').count(), 'read-only: no withdraw button').toBe(0);
    await page.close();
    const unknown = await open('#/i/nosuch/mail');
    await unknown.locator('.unknown').waitFor();
    expect(await unknown.locator('.unknown h1').innerText()).toContain('No instance named “nosuch”');
    expect(await unknown.locator('.unknown a', { hasText: 'demo' }).getAttribute('href')).toBe('#/i/demo/terminals');
    expect(await unknown.locator('.tabs').count()).toBe(0);
    await unknown.close();
  });

  it('mail with --write: withdrawing a queued message keeps it on the host, out of the queue, and says so', async () => {
    const writable = await startWeb({ ...demo.env, AGENT_KERNEL_TOKEN: 'web-pages-token-0123456789abcdef' }, ['--write']);
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.on('dialog', (dialog) => void dialog.accept());
      await page.goto(`${writable.url}#/i/${demo.name}/mail`);
      await page.locator('button.withdraw').waitFor();
      await shoot(page, 'mail');
      const id = await page.locator('tr', { has: page.locator('button.withdraw') }).getAttribute('data-id');
      await page.locator('button.withdraw').click();
      await pollUntil(async () => (await page.locator(`tr[data-id="${id}"]`).innerText()).includes('withdrawn by the operator'), 'the withdrawn status', { timeoutMs: 10_000 });
      expect(await page.locator('[role=status]').innerText()).toContain(`Withdrew ${id}`);
      expect(await page.locator('button.withdraw').count()).toBe(0);
      const mail = path.join(demo.stateDir, 'private', 'mail');
      expect(await readdir(path.join(mail, 'queue'))).toEqual([]);
      expect(await readdir(path.join(mail, 'withdrawn'))).toEqual([`${id}.json`]);
      expect(await readFile(path.join(demo.stateDir, 'private', 'events.jsonl'), 'utf8')).toContain(`"type":"message.withdrawn","id":"${id}"`);
      await page.close();
    } finally {
      await writable.stop();
    }
  });

  it('every page at 1400x900, as a person sees it', async () => {
    for (const [name, hash, ready] of [
      ['overview', '', '.instance'],
      ['terminal', `#/i/${demo.name}/tty/0`, '.focus-screen .xterm-rows'],
      ['ticks', `#/i/${demo.name}/ticks`, '.run'],
      ['transcript', `#/i/${demo.name}/tick/2`, '.log .line.result'],
      ['transcript-error', `#/i/${demo.name}/tick/9`, '.log .line.result'],
      ['recordings', `#/i/${demo.name}/recordings`, 'tr[data-file]'],
      ['replay', `#/i/${demo.name}/replay/tty_2-tick-009.cast`, '.ap-control-bar'],
      ['events', `#/i/${demo.name}/events`, 'tr[data-type="tick.ended"]'],
      ['all-events', '#/events', 'tr[data-type="tick.ended"]'],
      ['unknown-instance', '#/i/nosuch/mail', '.unknown'],
    ] as const) {
      const page = await open(hash);
      await page.locator(ready).first().waitFor();
      if (name === 'terminal') {
        await pollUntil(async () => (await page.locator('.focus-screen .xterm-rows').textContent())?.includes('Filesystem') === true, 'the terminal screen from the kernel', { timeoutMs: 10_000 });
      }
      // The player draws its poster, the overview its thumbnails, after their first data: let a frame pass.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await shoot(page, name);
      await page.close();
    }
  }, 120_000);
});
