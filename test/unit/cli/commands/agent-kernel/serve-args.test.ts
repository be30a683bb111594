import { describe, expect, it } from 'vitest';
import { parseListen, parseServeArgs } from '../../../../../src/cli/commands/agent-kernel/serve.js';

describe('serve arguments', () => {
  it.each([
    ['8765', { host: '127.0.0.1', port: 8765 }],
    ['0.0.0.0:80', { host: '0.0.0.0', port: 80 }],
    ['[::1]:9000', { host: '::1', port: 9000 }],
    ['localhost:0', { host: 'localhost', port: 0 }],
  ])('--http %s', (text, expected) => {
    expect(parseListen(text)).toEqual(expected);
  });
  it.each(['', 'abc', '70000', 'host:', ':80x'])('refuses --http %j', (text) => {
    expect(() => parseListen(text)).toThrow(/\[host:\]port/);
  });
  it('parses a whole command line and refuses mistakes with the usage', () => {
    expect(parseServeArgs(['foo', '--http', '8765', '--token-file', '/t'])).toEqual({ target: 'foo', http: { host: '127.0.0.1', port: 8765 }, tokenFile: '/t' });
    expect(parseServeArgs(['./dir'])).toEqual({ target: './dir' });
    expect(() => parseServeArgs([])).toThrow(/Which instance/);
    expect(() => parseServeArgs(['a', 'b'])).toThrow(/Unexpected argument "b"/);
    expect(() => parseServeArgs(['a', '--htp', '1'])).toThrow(/Unknown option --htp/);
    expect(() => parseServeArgs(['a', '--token-file', '/t'])).toThrow(/only applies with --http/);
    expect(() => parseServeArgs(['a', '--http'])).toThrow(/needs a value/);
  });
});
