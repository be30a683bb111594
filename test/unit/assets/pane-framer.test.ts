import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, MAX_FRAME_PAYLOAD, PaneFrameDecoder, paneFramerPerl } from '../../../src/tty/host/pane-frames.js';

/**
 * The pane framer (assets/pane-framer.pl) runs in the container for every pane when output is read
 * through pane pipes. It must parse (`perl -c`), fit a one-line tmux command (no quote, per-cent
 * sign or hash once its comments are dropped), and write frames the decoder reads back whole.
 */
const FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'assets', 'pane-framer.pl');

describe('assets/pane-framer.pl', () => {
  it('parses, as a file and as the one line the kernel runs', () => {
    const file = spawnSync('perl', ['-c', FILE], { encoding: 'utf8' });
    expect(file.stderr.trim()).toBe(`${FILE} syntax OK`);
    const line = spawnSync('perl', ['-c', '-e', paneFramerPerl()], { encoding: 'utf8' });
    expect(line.stderr.trim()).toBe('-e syntax OK');
  });

  it('holds nothing sh or tmux would change inside single quotes in a tmux command', () => {
    const code = paneFramerPerl();
    expect(code).not.toMatch(/['%#\n]/);
    expect(code).toContain(`sysread(STDIN, my $bytes, ${MAX_FRAME_PAYLOAD})`);
  });

  it('frames every byte of a pane in order, from offset 0, in frames of at most one atomic FIFO write', () => {
    const input = Buffer.concat([randomBytes(300_000), Buffer.from('\n\x1b]133;D;0\x07 tail')]);
    const framed = spawnSync('perl', ['-e', paneFramerPerl(), '%7', '3'], { input, maxBuffer: 64 * 1024 * 1024 });
    expect(framed.status).toBe(0);
    const out = framed.stdout;
    for (let at = 0; at < out.length; at += FRAME_HEADER_BYTES + out.readUInt32BE(at + 16)) {
      expect(FRAME_HEADER_BYTES + out.readUInt32BE(at + 16)).toBeLessThanOrEqual(4096);
    }
    const decoder = new PaneFrameDecoder();
    decoder.follow(7, 3);
    const got: Buffer[] = [];
    decoder.on('output', (pane, _offset, data) => got.push(Buffer.from(data)));
    decoder.on('broken', (reason) => expect.fail(reason));
    decoder.push(out);
    expect(Buffer.concat(got).equals(input)).toBe(true);
    expect(decoder.offsetOf(7)).toBe(input.length);
  });
});
