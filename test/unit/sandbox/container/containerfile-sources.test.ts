import { describe, expect, it } from 'vitest';
import { namedImages, remoteAddSources } from '../../../../src/sandbox/container/containerfile-sources.js';

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
    ['FROM debian\nADD \\\n\n  http://h/x /x', ['http://h/x']],
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

describe('namedImages', () => {
  const refs = (text: string) => namedImages(text).map((n) => `${n.instruction} ${n.reference}${n.refused ? ' !' : ''}`);
  it.each([
    ['FROM debian:bookworm-slim\nRUN true', ['FROM debian:bookworm-slim']],
    ['from 127.0.0.1:5000/x:y', ['FROM 127.0.0.1:5000/x:y']],
    ['FROM scratch\nCOPY a /a', []],
    ['FROM debian AS build\nRUN make\nFROM build\nCOPY --from=build /a /a\nCOPY --from=0 /a /b', ['FROM debian']],
    ['FROM debian as Build\nFROM BUILD', ['FROM debian']],
    ['FROM debian\nCOPY --from=0 /a /a\nCOPY --from=1 /a /a', ['FROM debian', 'COPY --from 1']],
    ['FROM debian\nCOPY --from=later /a /a\nFROM debian AS later', ['FROM debian', 'COPY --from later', 'FROM debian']],
    ['FROM debian\nCOPY --chown=0:0 --from=evil.example/x:1 ["/a", "/a"]', ['FROM debian', 'COPY --from evil.example/x:1']],
    ['FROM debian\ncopy --link --from=127.0.0.1:5000/x /a /a', ['FROM debian', 'COPY --from 127.0.0.1:5000/x']],
    ['FROM debian\nRUN --mount=type=bind,from=127.0.0.1:5000/x,target=/m true', ['FROM debian', 'RUN --mount from 127.0.0.1:5000/x']],
    ['FROM debian\nRUN --mount="type=bind, FROM=evil/x, target=/m" true', ['FROM debian', 'RUN --mount from evil/x']],
    ['FROM debian AS a\nFROM debian\nRUN --mount=type=bind,from=a,target=/m true', ['FROM debian', 'FROM debian']],
    ['FROM debian\nRUN --mount=type=cache,target=/c true', ['FROM debian']],
    ['ARG BASE=127.0.0.1:5000/x\nFROM $BASE', ['FROM $BASE !']],
    ['FROM ${BASE:-debian}', ['FROM ${BASE:-debian} !']],
    ['FROM debian\nCOPY --from=${S} /a /a', ['FROM debian', 'COPY --from ${S} !']],
    ['FROM --platform=linux/arm64 debian', ['FROM --platform=linux/arm64 debian !']],
    ['FROM --platform=$BUILDPLATFORM debian AS b', ['FROM --platform=$BUILDPLATFORM debian !']],
    ['# syntax=docker/dockerfile:1\nFROM debian', ['# syntax docker/dockerfile:1 !', 'FROM debian']],
    ['FROM debian\n# syntax=docker/dockerfile:1', ['FROM debian']],
    ['FROM debian\nONBUILD COPY --from=debian /a /a', ['FROM debian', 'ONBUILD COPY --from debian !']],
    ['FROM debian\nCOPY \\\n# c\n\n  --from=127.0.0.1:5000/x /a /a', ['FROM debian', 'COPY --from 127.0.0.1:5000/x']],
    ['# escape=`\nFROM `\n  127.0.0.1:5000/x', ['FROM 127.0.0.1:5000/x']],
    ['FROM debian\nRUN echo FROM evil --from=evil', ['FROM debian']],
    ['# FROM evil\nFROM debian', ['FROM debian']],
  ])('%j → %j', (text, expected) => {
    expect(refs(text)).toEqual(expected);
  });

  it('finds an image outside the Containerfile\'s stages however it is cased, spaced and continued, among honest lines (random Containerfiles)', () => {
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T;
    const honest = ['RUN apt-get update', 'COPY a /a', 'COPY --from=base /a /a', 'COPY --from=0 /b /b', 'RUN --mount=type=bind,from=base,target=/m true', 'ENV FROM=x', 'RUN echo FROM evil', '# FROM evil'];
    for (let trial = 0; trial < 500; trial++) {
      const lines = ['FROM debian AS base'];
      for (let i = random(6); i > 0; i--) lines.push(pick(honest));
      const evil = random(2) === 1;
      if (evil) {
        const gap = pick([' ', '  ', '\t', ' \\\n  ', ' \\\n# c\n ', ' \\\n\n ']);
        const image = pick(['127.0.0.1:5000/x:y', 'evil.example/x', '$V', '${V}', 'localhost:1/a']);
        const line = pick([
          () => `${pick(['FROM', 'from', 'From'])}${gap}${image}`,
          () => `FROM --platform=linux/amd64${gap}base`,
          () => `${pick(['COPY', 'copy', 'ONBUILD COPY'])}${gap}${pick(['', '--chown=1:1 '])}--from=${image}${gap}/a /a`,
          () => `${pick(['RUN', 'run'])}${gap}--mount=type=bind,${pick(['from', 'FROM', '"from'])}=${image}${pick(['', '"'])},target=/m${gap}true`,
        ])();
        lines.splice(1 + random(lines.length), 0, line);
      }
      for (let i = random(4); i > 0; i--) lines.push(pick(honest));
      const text = lines.join('\n');
      const outside = namedImages(text).filter((n) => n.refused !== undefined || n.reference !== 'debian');
      expect(outside.length > 0, text).toBe(evil);
    }
  });
});
