import { describe, expect, it } from 'vitest';
import { mmdebstrapArgs, suiteForTag } from '../../../../src/sandbox/engine/bootstrap.js';

describe('bootstrap helpers', () => {
  it.each([
    ['debian:bookworm-slim', 'bookworm'],
    ['debian:trixie', 'trixie'],
    ['debian:latest', 'bookworm'],
    ['my/base', 'bookworm'],
  ])('suite for %s is %s', (tag, suite) => expect(suiteForTag(tag)).toBe(suite));

  it('asks mmdebstrap for a slim apt-variant tar of the suite', () => {
    const args = mmdebstrapArgs('bookworm', '/tmp/out.tar');
    expect(args).toContain('--variant=apt');
    expect(args).toContain('--dpkgopt=path-exclude=/usr/share/doc/*');
    expect(args.slice(-2)).toEqual(['bookworm', '/tmp/out.tar']);
    expect(mmdebstrapArgs('bookworm', '/o.tar', 'http://mirror/debian').at(-1)).toBe('http://mirror/debian');
  });
});
