import { describe, expect, it } from 'vitest';
import { remoteAddSources } from '../../../../src/sandbox/container/containerfile-sources.js';

describe('remoteAddSources', () => {
  it.each([
    ['FROM debian\nADD http://169.254.169.254/latest/meta-data/ /m', ['http://169.254.169.254/latest/meta-data/']],
    ['FROM debian\nadd https://example.com/a.tgz /opt/', ['https://example.com/a.tgz']],
    ['FROM debian\n  Add --chown=1:1 --chmod=644 http://127.0.0.1:8080/x /x', ['http://127.0.0.1:8080/x']],
    ['FROM debian\nADD ["http://127.0.0.1/x", "/x"]', ['http://127.0.0.1/x']],
    ['FROM debian\nADD local.txt http://not-a-source-but-the-destination/ ', []],
    ['FROM debian\nADD a.txt ftp://h/x /dir/', ['ftp://h/x']],
    ['FROM debian\nADD \\\n  http://h/x \\\n  /x', ['http://h/x']],
    ['FROM debian\nADD \\\n# between\n\thttp://h/x /x', ['http://h/x']],
    ['# escape=`\nFROM debian\nADD `\n  http://h/x /x', ['http://h/x']],
    ['FROM debian\nARG U=http://h/x\nADD $U /x', ['$U']],
    ['FROM debian\nADD ${U:-http://h/x} /x', ['${U:-http://h/x}']],
    ['FROM debian\nONBUILD ADD http://h/x /x', ['http://h/x']],
    ['FROM debian\nCOPY http://h/x /x', []],
    ['FROM debian\nRUN curl -o /x http://h/x', []],
    ['FROM debian\nADD files/ /srv/\nADD app.tar.gz /opt/', []],
    ['# ADD http://h/x /x\nFROM debian', []],
  ])('%j → %j', (text, expected) => {
    expect(remoteAddSources(text)).toEqual(expected);
  });

  it('finds a URL ADD however it is cased, spaced and continued, among honest lines (random Containerfiles)', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T;
    const honest = ['RUN apt-get update', 'COPY a /a', 'ADD local.tgz /opt/', 'ENV A=b', 'WORKDIR /srv', 'RUN echo http://h/x > /x', '# ADD http://h/x /x'];
    for (let trial = 0; trial < 500; trial++) {
      const lines = ['FROM debian'];
      for (let i = random(6); i > 0; i--) lines.push(pick(honest));
      const evil = random(2) === 1;
      if (evil) {
        const keyword = pick(['ADD', 'add', 'Add', 'ONBUILD ADD', 'onbuild add']);
        const gap = pick([' ', '  ', '\t', ' \\\n  ', ' \\\n# c\n ']);
        const source = pick(['http://10.0.0.1/x', 'HTTPS://h/x', 'http://[::1]:80/x', '$V', '${V}']);
        lines.splice(1 + random(lines.length), 0, `${keyword}${gap}${pick(['', '--chown=1:1 '])}${source}${gap}/dest`);
      }
      for (let i = random(4); i > 0; i--) lines.push(pick(honest));
      const text = lines.join('\n');
      expect(remoteAddSources(text).length > 0, text).toBe(evil);
    }
  });
});
