import { it } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { TtyManager } from '../../../src/tty/tty-manager.js';
import { startTerminals } from './helpers/terminals.js';

it('debug adopt', async () => {
  const t = await startTerminals('host');
  try {
    for (let i = 0; i < 20; i++) await t.manager.open();
    await t.manager.wait(30);
    for (let i = 0; i < 20; i++) {
      try {
        await t.manager.type({ tty: i, expect: 'bash', text: `seq 1 10000 | sed 's/^/terminal ${i} line /'` });
      } catch (e) {
        const m = t.manager as unknown as { ttys: Map<number, { hasUnseen(): boolean; tracker: { collect(e: unknown): unknown; markAbs: number }; emulator: { bytesWritten: number; cursorAbs: number; screenText(): string } }> };
        for (const [n, tty] of m.ttys) if (tty.hasUnseen()) console.log('UNSEEN', n, tty.tracker.markAbs, tty.emulator.cursorAbs, JSON.stringify(tty.tracker.collect(tty.emulator)), JSON.stringify(tty.emulator.screenText()));
        throw e;
      }
      await t.manager.wait(30);
    }
    await t.manager.dispose();
    const m = TtyManager.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const name of ['init', 'adopt', 'listPanes', 'saveState', 'writeRegistry', 'openFiles']) {
      const orig = m[name]!;
      let total = 0;
      m[name] = async function (this: unknown, ...args: unknown[]) {
        const s = performance.now();
        try { return await orig.apply(this, args); } finally { total += performance.now() - s; console.log(name, (performance.now() - s).toFixed(1), 'total', total.toFixed(1)); }
      };
    }
    const s = performance.now();
    await TtyManager.start({ instance: t.test.instance, sandbox: t.sandbox, logger: silentLogger() }).then((x) => (t.manager = x));
    console.log('START', (performance.now() - s).toFixed(1));
  } finally {
    await t.cleanup();
  }
}, 120_000);
