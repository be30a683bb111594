import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TmuxHost } from '../../../src/tty/host/tmux-host.js';
import { tmuxArgv, tmuxSocketName } from '../../../src/tty/host/tmux-server.js';
import { checkNothingLost } from '../../../bench/lib/nothing-lost.mjs';
import type { TtyManager } from '../../../src/tty/tty-manager.js';
import { type Terminals, startTerminals, waitFor } from './helpers/terminals.js';

// tty.history_limit 1000: tmux drops its oldest 100 rows whenever its history reaches 1000.
const LIMIT = 1000;

/** The terminal's reports from `manager`'s waits until one shows `last`. */
async function reportsUntil(manager: TtyManager, tty: number, last: RegExp, into: Array<{ text: string }>): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const report = (await manager.wait({ timeoutMs: 5000 })).changed.find((r) => r.tty === tty);
    if (report) into.push({ text: report.text });
    if (report && last.test(report.text)) return;
  }
  throw new Error(`never showed ${last}; showed:\n${into.map((r) => r.text).join('\n')}`);
}

// Re-adoption when tmux trims its history at an awkward moment: real tmux (host backend),
// a real TtyManager killed and started again.
describe('re-adoption across a tmux history trim (host tmux)', () => {
  let t: Terminals;
  let dir: string;
  beforeAll(async () => {
    t = await startTerminals('host', { history_limit: LIMIT });
    dir = await mkdtemp(path.join(os.tmpdir(), 'ak-reloc-'));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await t?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows every line once when tmux trims between the check of the saved rows and the capture', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    const flag = path.join(dir, 'go-on');
    // 850 lines this server sees (history ~810 of 1000: never trimmed), then 200 more once the next
    // server has checked the saved rows: tmux trims 100 rows before that server captures.
    const script = path.join(dir, 'print.sh');
    await writeFile(script, `seq -f L-%g 1 850\nwhile [ ! -e ${flag} ]; do sleep 0.05; done\nseq -f L-%g 851 1050\necho done-marker\n`);
    await t.manager.type({ tty, expect: 'bash', text: `bash ${script}` });
    const reports: Array<{ text: string }> = [];
    await reportsUntil(t.manager, tty, /^L-850$/m, reports);
    await t.manager.dispose();

    const socket = tmuxSocketName(t.sandbox, t.test.name);
    const paneHas = async (paneId: string, text: string) => {
      const shown = await t.sandbox.run(tmuxArgv(socket, 'capture-pane', '-p', '-t', paneId), { env: { TMUX: '' } });
      return shown.stdout.includes(text);
    };
    const history = async (paneId: string) => (await t.sandbox.run(tmuxArgv(socket, 'capture-pane', '-p', '-t', paneId, '-S', '-', '-E', '-'), { env: { TMUX: '' } })).stdout;
    const rowsAt = TmuxHost.prototype.rowsAt;
    let checkedAt: number | undefined;
    let pane = '';
    vi.spyOn(TmuxHost.prototype, 'rowsAt').mockImplementation(async function (this: TmuxHost, paneId, windows) {
      const answer = await rowsAt.call(this, paneId, windows);
      if (checkedAt === undefined) {
        checkedAt = answer?.historySize;
        pane = paneId;
        // The next server looked at the saved rows; now the terminal prints on, past the limit.
        await writeFile(flag, '');
        await expect.poll(() => paneHas(paneId, 'done-marker'), { timeout: 30_000 }).toBe(true);
      }
      return answer;
    });
    const manager = await t.restart();
    expect(checkedAt, 'the check ran before tmux trimmed').toBeLessThan(LIMIT - LIMIT / 10);
    expect(await history(pane), 'tmux trimmed after the check').not.toMatch(/^L-1$/m);

    await reportsUntil(manager, tty, /^done-marker$/m, reports);
    const verdict = checkNothingLost(reports);
    const after = reports.at(-1)?.text ?? '';
    expect({ ...verdict, lost: verdict.lost.length }, after).toEqual({ lost: 0, announcedGone: 0, wrongGoneCounts: 0, unlabelledRepeats: [], labelledRepeats: 0, inconsistentElisions: 0, last: 1050 });
    expect(after).not.toMatch(/gone|possibly repeated/);
  }, 120_000);

  it('tells the lines gone unseen even when the server that found them stopped before telling', async () => {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    const [seen, more] = [path.join(dir, 'seen'), path.join(dir, 'more')];
    // The agent sees up to L-850; the server takes in 100 more lines the agent never looks at; then,
    // with no server attached, 900 more: tmux trims 900 rows, the last 50 or so never seen.
    const script = path.join(dir, 'gone.sh');
    const hold = (flag: string) => `while [ ! -e ${flag} ]; do sleep 0.05; done`;
    await writeFile(script, `seq -f L-%g 1 850\n${hold(seen)}\nseq -f L-%g 851 950\n${hold(more)}\nseq -f L-%g 951 1850\necho done-marker\n`);
    await t.manager.type({ tty, expect: 'bash', text: `clear; bash ${script}` });
    const reports: Array<{ text: string }> = [];
    await reportsUntil(t.manager, tty, /^L-850$/m, reports);
    await writeFile(seen, '');
    await expect.poll(() => t.manager.screenOf(tty)?.ansi.includes('L-950'), { timeout: 30_000 }).toBe(true);
    await t.manager.dispose();

    const socket = tmuxSocketName(t.sandbox, t.test.name);
    const paneText = async () => (await t.sandbox.run(tmuxArgv(socket, 'capture-pane', '-p', '-t', `kernel:${tty}`), { env: { TMUX: '' } })).stdout;
    await writeFile(more, '');
    await expect.poll(paneText, { timeout: 30_000 }).toMatch(/^done-marker$/m);
    // This server finds the rows gone, and stops before any wait tells the agent.
    await (await t.restart()).dispose();

    await reportsUntil(await t.restart(), tty, /^done-marker$/m, reports);
    const verdict = checkNothingLost(reports);
    // The note's count is the gap exactly (wrongGoneCounts 0): L-851 up to the first line tmux kept.
    expect({ ...verdict, lost: verdict.lost.length }, reports.at(-1)?.text).toEqual({ lost: 0, announcedGone: expect.any(Number), wrongGoneCounts: 0, unlabelledRepeats: [], labelledRepeats: 0, inconsistentElisions: 0, last: 1850 });
    expect(verdict.announcedGone).toBeGreaterThan(0);
  }, 120_000);
});
