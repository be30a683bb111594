import { describe, expect, it } from 'vitest';
import { createTestInstance } from '../../helpers/test-instance.js';
import { connectStdio, ensureBuilt, textOf } from './helpers.js';

describe('agent-kernel serve with the container engine down', () => {
  it('answers the handshake, gives login a clear isError instead of hanging, and keeps serving', async () => {
    await ensureBuilt();
    const test = await createTestInstance({ config: { container: { engine_socket: 'unix:///tmp/agent-kernel-no-engine.sock' } } });
    const session = await connectStdio(test.dataDir);
    try {
      const { tools } = await session.client.listTools();
      expect(tools).toHaveLength(5);
      const login = await session.call('login');
      expect(login.isError).toBe(true);
      expect(textOf(login)).toMatch(/^ENGINE_UNREACHABLE: [\s\S]*agent-kernel-no-engine\.sock/);
      expect(textOf(login)).toMatch(/login\(\) again/);
      const again = await session.call('login');
      expect(textOf(again)).toMatch(/^ENGINE_UNREACHABLE/);
      expect((await session.call('wait', {})).isError).toBe(true);
    } finally {
      await session.close();
      await test.cleanup();
    }
  });
});
