import { it } from 'vitest';
import type { WaitResult } from '../../../src/tty/types.js';
import { startManagerChild } from './helpers/manager-child.js';
import { startTerminals, waitFor } from './helpers/terminals.js';

it('debug', async () => {
  const t = await startTerminals('host');
  try {
    const { tty } = await t.manager.open();
    await waitFor(t.manager, tty, (text) => /[#$] $/m.test(text));
    await t.manager.dispose();
    const child = await startManagerChild(t.test.name, t.test.dataDir);
    let first: WaitResult;
    try {
      await child.call('type', { tty, expect: 'bash', text: 'for i in $(seq 1 40); do echo "line-$i"; sleep 0.05; done' });
      first = await child.call<WaitResult>('wait', 1);
    } finally {
      await child.kill();
    }
    console.log('FIRST', JSON.stringify(first));
    console.log(await (await import('node:fs/promises')).readFile(t.test.instance.paths.kernelState + '/ttys.json', 'utf8'));
    const m = await t.restart();
    const r = await m.wait(10);
    console.log('SECOND', JSON.stringify(r));
  } finally {
    await t.cleanup();
  }
});
