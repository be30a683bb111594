import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../../src/log/logger.js';
import type { SandboxProcess } from '../../../../src/sandbox/sandbox.js';
import { TmuxControlClient } from '../../../../src/tty/host/control-client.js';

/** A control client over in-memory pipes: what tmux would write is pushed into stdout by the test. */
function fakeTmux(): { client: TmuxControlClient; stdout: PassThrough } {
  const stdout = new PassThrough();
  const proc: SandboxProcess = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), exited: new Promise(() => {}), close: () => {} };
  return { client: new TmuxControlClient(proc, silentLogger()), stdout };
}

/** tmux's escaping of pane output: bytes below 0x20 and the backslash as \ooo. */
function escape(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += b < 0x20 || b === 0x5c ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b);
  return out;
}

describe('TmuxControlClient', () => {
  it('delivers every byte of every pane in order, and runs a reply before output that came after it, however the stream is split (random trials)', async () => {
    for (let trial = 0; trial < 30; trial++) {
      const { client, stdout } = fakeTmux();
      const got = new Map<string, Buffer[]>();
      let emitted = 0;
      client.on('output', (pane, data) => {
        got.set(pane, [...(got.get(pane) ?? []), Buffer.from(data)]);
        emitted += data.length;
      });
      const want = new Map<string, Buffer[]>();
      let stream = '';
      let sentBeforeReply = 0;
      let emittedAtReply = -1;
      const reply = client.commands(['list-panes'], () => (emittedAtReply = emitted));
      for (let i = 0; i < 40; i++) {
        if (i === 20) {
          stream += '%begin 1 7 1\nanswer\n%end 1 7 1\n';
          sentBeforeReply = [...want.values()].flat().reduce((n, b) => n + b.length, 0);
        }
        const pane = `%${Math.floor(Math.random() * 3)}`;
        const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(Math.random() * 60) }, () => Math.floor(Math.random() * 256)));
        want.set(pane, [...(want.get(pane) ?? []), bytes]);
        stream += `%output ${pane} ${escape(bytes)}\n`;
      }
      // Bytes as tmux writes them (latin1 keeps each byte), split at random places.
      const raw = Buffer.from(stream, 'latin1');
      for (let at = 0; at < raw.length; ) {
        const size = 1 + Math.floor(Math.random() * 200);
        stdout.write(raw.subarray(at, at + size));
        at += size;
      }
      expect(await reply).toEqual([['answer']]);
      await new Promise((resolve) => setImmediate(resolve));
      for (const [pane, parts] of want) expect(Buffer.concat(got.get(pane) ?? [])).toEqual(Buffer.concat(parts));
      // At the reply, exactly the output tmux sent before it has been handed on.
      expect(emittedAtReply).toBe(sentBeforeReply);
      client.close();
    }
  });

  it('emits one output event for many %output lines of one pane in one read', () => {
    const { client, stdout } = fakeTmux();
    const sizes: number[] = [];
    client.on('output', (_pane, data) => sizes.push(data.length));
    stdout.write(Buffer.from(Array.from({ length: 100 }, (_, i) => `%output %1 line ${i}\\015\\012\n`).join(''), 'latin1'));
    expect(sizes.length).toBe(1);
    client.close();
  });
});
