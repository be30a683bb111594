import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { renderDiff, skippedLines } from '../../../src/cli/commands/kernel-runner/snapshots/snapshot.js';
import { escapeControls } from '../../../src/util/control-chars.js';
import { silentLogger } from '../../../src/log/logger.js';
import { openSandbox } from '../../../src/sandbox/container/open-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { diffSnapshots } from '../../../src/snapshot/diff.js';
import { storeOf, takeSnapshot } from '../../../src/snapshot/take.js';
import { describeWithEngine } from '../../helpers/engine.js';
import { type TestInstance, createTestInstance } from '../../helpers/test-instance.js';

vi.setConfig({ testTimeout: 300_000 });

/** A line the operator would read as "the agent deleted /etc/passwd" (or a data file). */
const FORGED = ['  - etc/passwd', '  - notes/plan.md', '  data: forged: left out'];

/**
 * The agent names its files, and `kernel-runner snapshot diff` and `snapshot` list those names
 * to the operator, one per line. A name with a newline in it must stay one line: otherwise the
 * agent writes the audit of its own tick (a removal it never made, a change hidden among
 * invented lines).
 */
describeWithEngine('escape: file names in the snapshot listings', () => {
  let test: TestInstance;
  let sandbox: Sandbox;

  beforeAll(async () => {
    test = await createTestInstance({ config: { container: { network: 'none' } } });
    sandbox = await openSandbox(test.instance, { logger: silentLogger() });
  });
  afterAll(async () => {
    await test?.cleanup();
  });

  it('a newline in a file name of the data directory or the container cannot forge a line of snapshot diff or of what a snapshot left out', async () => {
    const before = await takeSnapshot(test.instance, { trigger: 'manual' });
    // Files and a socket whose names carry a newline and a line of the listing after it.
    const plant = [
      'import os, socket, sys',
      'root, data = "/root", sys.argv[1]',
      'def put(top, name):',
      '    place = os.path.join(top, name)',
      '    os.makedirs(os.path.dirname(place), exist_ok=True)',
      '    open(place, "w").write("x")',
      `put(root, "innocent\\n${FORGED[0] as string}")`,
      `put(data, "innocent\\n${FORGED[1] as string}")`,
      `socket.socket(socket.AF_UNIX).bind(os.path.join(data, "sock\\n${FORGED[2] as string}"))`,
    ].join('\n');
    const planted = await sandbox.run(['python3', '-c', plant, test.dataDir], { user: '0' });
    expect(planted.exitCode, planted.stderr).toBe(0);
    const after = await takeSnapshot(test.instance, { trigger: 'manual' });

    const diff = await diffSnapshots(before, after, storeOf(test.instance).store, async () => '');
    // What the command prints (out() escapes the other control characters the same way).
    const printed = escapeControls(renderDiff(before.id, after.id, diff) + skippedLines(after));
    const lines = printed.split('\n');
    for (const forged of FORGED) expect(lines.filter((line) => line.startsWith(forged)), printed).toEqual([]);
    // The files are still listed, each on its own line, their names shown with the newline escaped.
    expect(lines).toContain(`  + root/innocent\\u000a${FORGED[0] as string}`);
    expect(lines).toContain(`  + innocent\\u000a${FORGED[1] as string}`);
    expect(lines.some((line) => line.startsWith(`  data: sock\\u000a${FORGED[2] as string}`)), printed).toBe(true);
  });
});
