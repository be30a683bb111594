import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, MAX_FRAME_PAYLOAD, PaneFrameDecoder } from '../../../../src/tty/host/pane-frames.js';

function frame(pane: number, offset: number | bigint, payload: Buffer, length = payload.length, pipe = 1): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32BE(pane, 0);
  header.writeUInt32BE(pipe, 4);
  header.writeBigUInt64BE(BigInt(offset), 8);
  header.writeUInt32BE(length, 16);
  return Buffer.concat([header, payload]);
}

function decoder(panes: number[]): { d: PaneFrameDecoder; got: Map<number, Buffer[]>; broken: string[] } {
  const d = new PaneFrameDecoder();
  for (const p of panes) d.follow(p, 1);
  const got = new Map<number, Buffer[]>();
  const broken: string[] = [];
  d.on('output', (pane, _offset, data) => got.set(pane, [...(got.get(pane) ?? []), Buffer.from(data)]));
  d.on('broken', (reason) => broken.push(reason));
  return { d, got, broken };
}


describe('PaneFrameDecoder', () => {
  it('delivers every byte of every pane in order, however the stream is split (random trials)', () => {
    for (let trial = 0; trial < 50; trial++) {
      const { d, got, broken } = decoder([0, 1, 2]);
      const want = new Map<number, Buffer[]>();
      const offsets = [0, 0, 0];
      const parts: Buffer[] = [];
      for (let i = 0; i < 60; i++) {
        const pane = Math.floor(Math.random() * 3);
        const bytes = randomBytes(Math.floor(Math.random() * MAX_FRAME_PAYLOAD));
        parts.push(frame(pane, offsets[pane]!, bytes));
        offsets[pane]! += bytes.length;
        want.set(pane, [...(want.get(pane) ?? []), bytes]);
      }
      const raw = Buffer.concat(parts);
      for (let at = 0; at < raw.length; ) {
        const size = 1 + Math.floor(Math.random() * 9000);
        d.push(raw.subarray(at, at + size));
        at += size;
      }
      expect(broken).toEqual([]);
      for (const [pane, bytes] of want) expect(Buffer.concat(got.get(pane) ?? []).equals(Buffer.concat(bytes))).toBe(true);
      for (const pane of [0, 1, 2]) expect(d.offsetOf(pane)).toBe(offsets[pane]);
    }
  });

  it.each([
    ['a frame larger than one atomic write', () => frame(0, 5, Buffer.alloc(0), MAX_FRAME_PAYLOAD + 1), /at most 4076/],
    ['a size of 4 GB that would make a host wait for bytes forever', () => frame(0, 5, Buffer.alloc(0), 0xffffffff), /at most/],
    ['the same bytes again (a rewind)', () => frame(0, 2, Buffer.from('llo')), /from offset 2 again \(5 were delivered\)/],
    ['bytes from the start again', () => frame(0, 0, Buffer.from('hello')), /again/],
    ['a jump forward (bytes skipped)', () => frame(0, 9, Buffer.from('x')), /skipping 4 after the 5 delivered/],
    ['an offset past 2^53', () => frame(0, 2n ** 63n, Buffer.from('x')), /skipping/],
    ['a pipe never opened', () => frame(0, 5, Buffer.from('x'), 1, 2), /pipe 2 of pane %0, which was never opened/],
    ['a pane no terminal has', () => frame(7, 0, Buffer.from('x')), /pane %7, which no terminal has/],
    ['garbage', () => Buffer.from('this is not a frame at all, just text from somewhere'), /no terminal has|at most|again|skipping/],
  ])('breaks the stream on %s, and reads nothing after it', (_name, bad, reason) => {
    const { d, got, broken } = decoder([0]);
    d.push(frame(0, 0, Buffer.from('hello')));
    d.push(bad());
    d.push(frame(0, 5, Buffer.from(' world')));
    expect(broken).toHaveLength(1);
    expect(broken[0]).toMatch(reason);
    expect(d.broken).toBe(broken[0]);
    // Nothing shown twice, nothing after the break.
    expect(Buffer.concat(got.get(0) ?? []).toString()).toBe('hello');
  });

  it('holds at most one frame of a flood that never finishes its frame, and nothing of one that lies', () => {
    const { d, broken } = decoder([0]);
    // A header announcing a whole frame, then its bytes one at a time: held until complete.
    const whole = frame(0, 0, randomBytes(MAX_FRAME_PAYLOAD));
    for (let i = 0; i < whole.length - 1; i++) {
      d.push(whole.subarray(i, i + 1));
      expect(d.heldBytes).toBe(i + 1);
    }
    expect(broken).toEqual([]);
    d.push(whole.subarray(whole.length - 1));
    expect(d.heldBytes).toBe(0);
    // 26 MB of honest frames in 64 KB chunks: nothing accumulates.
    const { d: flood, broken: floodBroken } = decoder([0]);
    let offset = 0;
    const payload = randomBytes(MAX_FRAME_PAYLOAD);
    let delivered = 0;
    flood.on('output', (_p, _o, data) => (delivered += data.length));
    let mostHeld = 0;
    for (let chunk = 0; chunk < 400; chunk++) {
      const frames: Buffer[] = [];
      for (let i = 0; i < 16; i++) {
        frames.push(frame(0, offset, payload));
        offset += payload.length;
      }
      const joined = Buffer.concat(frames);
      // Split where a frame does not end: each push leaves part of one frame held.
      flood.push(joined.subarray(0, 40_000));
      mostHeld = Math.max(mostHeld, flood.heldBytes);
      flood.push(joined.subarray(40_000));
      mostHeld = Math.max(mostHeld, flood.heldBytes);
    }
    expect(floodBroken).toEqual([]);
    expect(delivered).toBe(offset);
    expect(mostHeld).toBeGreaterThan(0);
    expect(mostHeld).toBeLessThan(FRAME_HEADER_BYTES + MAX_FRAME_PAYLOAD);
    // A header that lies about its size breaks the stream at once: nothing is held for it.
    const { d: liar, broken: liarBroken } = decoder([0]);
    liar.push(frame(0, 0, Buffer.alloc(0), 1024 * 1024 * 1024));
    expect(liar.heldBytes).toBe(0);
    expect(liarBroken).toHaveLength(1);
  });

  it('follows a pane again from the offset it is told, and forgets a closed one: its last frames are dropped, not taken for a lie', () => {
    const { d, got, broken } = decoder([]);
    d.follow(3, 1, 100);
    d.push(frame(3, 100, Buffer.from('ab')));
    expect(d.offsetOf(3)).toBe(102);
    d.forget(3);
    // tmux lets a pane go only once its pipe has taken what it held: the framer sends on after the window closed.
    d.push(Buffer.concat([frame(3, 102, Buffer.from('c')), frame(3, 103, Buffer.from('d'))]));
    expect(Buffer.concat(got.get(3) ?? []).toString()).toBe('ab');
    expect(d.droppedBytes).toBe(2);
    expect(broken).toEqual([]);
    d.push(frame(3, 104, Buffer.alloc(0), MAX_FRAME_PAYLOAD + 1));
    expect(broken[0]).toMatch(/at most/);
    const never = decoder([]);
    never.d.push(frame(4, 0, Buffer.from('x')));
    expect(never.broken[0]).toMatch(/no terminal has/);
  });

  it('drops what a replaced pipe still sends (its bytes are in the capture taken when it was replaced) and reads the new pipe from 0', () => {
    const { d, got, broken } = decoder([0]);
    d.push(frame(0, 0, Buffer.from('old ')));
    // Re-adoption: capture and a new pipe (2) in one tmux command group.
    d.follow(0, 2);
    d.push(frame(0, 4, Buffer.from('late'), 4, 1));
    d.push(frame(0, 0, Buffer.from('new'), 3, 2));
    expect(broken).toEqual([]);
    expect(Buffer.concat(got.get(0) ?? []).toString()).toBe('old new');
    expect(d.droppedBytes).toBe(4);
  });

  it('binds a pipe opened on a new window to the pane its first frame names, and only from offset 0', () => {
    const { d, got, broken } = decoder([]);
    d.expect(5);
    d.push(frame(9, 0, Buffer.from('first'), undefined, 5));
    d.push(frame(9, 5, Buffer.from(' then'), undefined, 5));
    expect(Buffer.concat(got.get(9) ?? []).toString()).toBe('first then');
    expect(broken).toEqual([]);
    // The pipe is bound: the same number on another pane is a lie.
    d.push(frame(10, 0, Buffer.from('x'), undefined, 5));
    expect(broken[0]).toMatch(/pane %10, which no terminal has/);

    const other = decoder([]);
    other.d.expect(6);
    other.d.push(frame(4, 100, Buffer.from('late'), undefined, 6));
    expect(other.broken[0]).toMatch(/skipping 100/);
    const never = decoder([]);
    never.d.expect(6);
    never.d.unexpect(6);
    never.d.push(frame(4, 0, Buffer.from('x'), undefined, 6));
    expect(never.broken[0]).toMatch(/which no terminal has/);
  });
});
