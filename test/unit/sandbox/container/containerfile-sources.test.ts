import { describe, expect, it } from 'vitest';
import { containerfileUses } from '../../../../src/sandbox/container/containerfile-sources.js';
import { extractBuilderFlags, parseContainerfile } from '../../../../src/sandbox/container/containerfile-grammar.js';

const refused = (text: string) => containerfileUses(text).refused.length > 0;
const images = (text: string) => containerfileUses(text).images.map((n) => `${n.instruction} ${n.reference}`);

describe('parseContainerfile (the engine parser\'s rules)', () => {
  it.each([
    ['ADD http:/\\\n/127.0.0.1:8/x /q', 'ADD http://127.0.0.1:8/x /q'],
    ['ADD a\\  \t\n# c\n\n  b /q', 'ADD a  b /q'],
    ['# escape=`\nADD a`\nb /q', 'ADD ab /q'],
    ['  # ESCAPE = `\nADD a`\nb /q', 'ADD ab /q'],
    ['\n# escape=`\nADD a`\nb /q', 'ADD a`'],
    ['# hello\n# escape=`\nADD a`\nb /q', 'ADD a`'],
    ['\uFEFFADD a\\\r\nb /q\r\n', 'ADD ab /q'],
    ['ADD a\\\\\nb /q', 'ADD a\\\\'],
  ])('%j: first instruction %j', (text, first) => {
    expect(parseContainerfile(text).instructions[0]?.original).toBe(first);
  });

  it('reads flags as the engine does (quotes and backslashes undone, NBSP bytes as spaces)', () => {
    expect(extractBuilderFlags('--chown=0:0 "http://h/x" /q')).toEqual({ flags: ['--chown=0:0'], args: '"http://h/x" /q' });
    expect(extractBuilderFlags('--chown="0 0" x /q')).toEqual({ flags: ['--chown=0 0'], args: 'x /q' });
    expect(extractBuilderFlags('--chown=0\u00a0http://h/x /q').args).toBe('http://h/x /q');
    expect(extractBuilderFlags('-- --x /q')).toEqual({ flags: [], args: ' --x /q' });
    expect(parseContainerfile('\u0085ADD x /q').instructions[0]?.keyword).toBe('add');
  });
});

describe('containerfileUses: an allow-list', () => {
  const url = 'http://127.0.0.1:8080/x';
  it.each([
    `ADD ${url} /q`,
    `ADD "${url}" /q`,
    `ADD '${url}' /q`,
    'ADD h\\ttp://127.0.0.1/x /q',
    'ADD http\\://127.0.0.1/x /q',
    "ADD ht''tp://127.0.0.1/x /q",
    `ADD ["'${url}'", "/q"]`,
    `ADD ["\\u0068ttp://127.0.0.1/x", "/q"]`,
    `ADD --chown=0:0 "${url}" /q`,
    'ADD http:/\\\n/127.0.0.1:8/x /q',
    `ONBUILD ADD "${url}" /q`,
    `ARG U=${url}\nADD $U /q`,
    'ADD ${U} /q',
    `# escape=\`\nADD h\`ttp://127.0.0.1/x /q`,
    `add\t${url}\t/q`,
    `\u0085ADD ${url} /q`,
    `ADD ["${url}", "/q"] trailing`,
    `ADD --chown=0\u00a0${url} /q`,
    `ADD <<EOF /q\n${url}\nEOF`,
    `COPY ${url} /q`,
    'RUN --mount=type=bind,from=evil/x,target=/m true',
    'FROM --platform=linux/arm64 debian',
    '# syntax=docker/dockerfile:1\nFROM debian',
    'FROM "debian:bookworm-slim"',
    'FROM $BASE',
    'COPY --from=${S} /a /a',
    `ONBUILD ONBUILD ADD ${url} /q`,
    `ONBUILD --x ADD a /q`,
    '# escape=x\nFROM debian',
    // Podman's builder reads these as ADD <url>: no directive with a form feed, and a doubled escape continues the line.
    `#\fescape=\`\nFROM debian\nADD h\\\n${url.slice(1)} /q`,
    `ADD h\\\\\n${url.slice(1)} /q`,
    `# escape=\`\nFROM debian\nADD h\`\`\n${url.slice(1)} /q`,
    'FROM debian AS Build\nFROM build',
    'FROM debian AS 127.0.0.1:5000/X\nFROM debian\nCOPY --from=127.0.0.1:5000/x /a /b',
  ])('refuses %j', (text) => {
    // A parser directive counts only at the top.
    expect(refused(text.startsWith('#') ? text : `FROM debian\n${text}`)).toBe(true);
  });

  it.each([
    'ADD files/ /srv/\nADD app.tar.gz /opt/\nCOPY --chown=1:1 a b /dir/',
    'ADD ["a b.txt", "/q"]'.replace('a b', 'a_b'),
    'RUN curl -o /x http://h/x && echo "$HOME"',
    'COPY --from=0 /usr/bin/tmux /usr/local/bin/',
    'ENV A=http://x\nLABEL a="b"\nADD ./x /$HOME/',
    'ONBUILD RUN echo "http://x"\nONBUILD COPY a /a',
    '# ADD http://h/x /x',
    'RUN a \\\n  && b \\  \n  && c',
  ])('allows %j', (text) => {
    expect(containerfileUses(`FROM debian\n${text}`).refused).toEqual([]);
  });

  it.each([
    ['FROM debian:bookworm-slim\nRUN true', ['FROM debian:bookworm-slim']],
    ['FROM scratch\nCOPY a /a', []],
    ['FROM debian AS build\nFROM build\nCOPY --from=build /a /a\nCOPY --from=0 /a /b\nCOPY --from=5 /a /b', ['FROM debian', 'COPY --from 5']],
    // Podman compares stage names as written: one that differs in case, an index in FROM, or a padded index is an image.
    ['FROM debian AS build\nFROM BUILD\nFROM 0\nCOPY --from=00 /a /b', ['FROM debian', 'FROM BUILD', 'FROM 0', 'COPY --from 00']],
    ['FROM debian\nCOPY --from=later /a /a\nFROM debian AS later', ['FROM debian', 'COPY --from later', 'FROM debian']],
    ['FROM debian\nONBUILD COPY --from=other /a /a', ['FROM debian', 'ONBUILD COPY --from other']],
    ['# escape=`\nFROM `\n  127.0.0.1:5000/x', ['FROM 127.0.0.1:5000/x']],
  ])('%j names %j', (text, expected) => {
    expect(images(text)).toEqual(expected);
  });

  it('refuses every obfuscation of a URL source the engine would undo, and keeps honest lines (random Containerfiles)', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T;
    // Each rewrites one character of the URL into a spelling the engine's lexer turns back into it.
    const disguise = [(c: string) => c, (c: string) => `\\${c}`, (c: string) => `${c}''`, (c: string) => `"${c}"`, (c: string) => `'${c}'`, (c: string) => `${c}\\\n`, (c: string) => `${c}\\ \n# c\n\n`];
    const honest = ['RUN apt-get update', 'COPY a /a', 'ADD local.tgz /opt/', 'ENV A=b', 'WORKDIR /srv', 'RUN echo http://h/x > /x', '# ADD http://h/x /x', 'RUN apk \\\n  add curl'];
    for (let trial = 0; trial < 1000; trial++) {
      const lines = ['FROM debian'];
      for (let i = random(5); i > 0; i--) lines.push(pick(honest));
      const evil = random(2) === 1;
      if (evil) {
        const source = [...pick(['http://10.0.0.1/x', 'https://h/x', 'HTTP://[::1]:80/x'])].map((c) => pick(disguise)(c)).join('');
        const keyword = pick(['ADD', 'add', 'aDd', 'ONBUILD ADD', 'onbuild  add']);
        lines.splice(1 + random(lines.length), 0, `${keyword}${pick([' ', '\t', ' \\\n '])}${pick(['', '--chown=0:0 '])}${source} /dest`);
      }
      for (let i = random(3); i > 0; i--) lines.push(pick(honest));
      const text = lines.join('\n');
      expect(refused(text), text).toBe(evil);
    }
  });
});
