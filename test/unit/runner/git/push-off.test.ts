import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { pushAgentBranch } from '../../../../src/runner/git/push.js';
import type { Sandbox } from '../../../../src/sandbox/sandbox.js';

describe('push is off', () => {
  it('is said once a process (a watch of many ticks), not every tick', async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const sandbox = {} as Sandbox;
    for (let tick = 0; tick < 5; tick++) {
      expect(await pushAgentBranch({ sandbox, dataDir: '/nowhere', workDir: '/nowhere', config: undefined, env: {}, logger })).toEqual({ status: 'off' });
    }
    const said = lines.filter((line) => line.level >= 30 && line.msg.startsWith('push is off'));
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('set runner.push.remote');
  });
});
