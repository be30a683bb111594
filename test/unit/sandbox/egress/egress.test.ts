import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../../../src/config/agent-config.js';
import { DEFAULT_ALLOW, describeAllowEntry, parseAllowEntry } from '../../../../src/config/egress-allow.js';
import { formatRecords } from '../../../../src/sandbox/egress/log.js';
import { networkOf, squidAddress } from '../../../../src/sandbox/egress/ranges.js';
import { parseAccessLine, refusalNotice, squidConfig } from '../../../../src/sandbox/egress/squid.js';

describe('container.network and container.allow', () => {
  it('defaults to allowlist with the Debian package sources', () => {
    const { container } = parseAgentConfig({});
    expect(container.network).toBe('allowlist');
    expect(container.allow).toEqual([...DEFAULT_ALLOW]);
  });

  it('keeps accepting "bridge" as the old name of open', () => {
    expect(parseAgentConfig({ container: { network: 'bridge' } }).container.network).toBe('open');
  });

  it('refuses a bad entry with a message naming it and what is accepted', () => {
    expect(() => parseAgentConfig({ container: { allow: ['exa mple.com'] } })).toThrow(/container\.allow.*expected a host name/s);
    expect(() => parseAgentConfig({ container: { allow: ['10.0.0.0/40'] } })).toThrow(/IPv4 network/);
    expect(() => parseAgentConfig({ container: { network: 'host' } })).toThrow(/allowlist/);
  });
});

describe('parseAllowEntry', () => {
  it.each([
    ['deb.debian.org', 'domain', 'deb.debian.org', [80, 443]],
    ['*.PyPI.org', 'wildcard', '.pypi.org', [80, 443]],
    ['registry.npmjs.org:443', 'domain', 'registry.npmjs.org', [443]],
    ['172.17.0.1:8080', 'ip', '172.17.0.1', [8080]],
    ['10.1.0.0/16:*', 'cidr', '10.1.0.0/16', 'any'],
  ] as const)('%s', (text, kind, host, ports) => {
    expect(parseAllowEntry(text)).toEqual({ kind, host, ports, text });
  });

  it.each(['', '*', '*.com', 'a..b', '-x.com', 'x.com:0', 'x.com:70000', '1.2.3', '300.1.1.1', '[::1]:80', 'http://x.com'])('refuses %j', (text) => {
    expect(() => parseAllowEntry(text)).toThrow();
  });

  it('describes entries for people', () => {
    expect(describeAllowEntry(parseAllowEntry('*.example.com'))).toBe('*.example.com:80,443');
    expect(describeAllowEntry(parseAllowEntry('1.2.3.4:*'))).toBe('1.2.3.4:*');
  });
});

describe('squidConfig', () => {
  const config = squidConfig(['deb.debian.org', '*.example.com:443', '172.17.0.1:8080'].map(parseAllowEntry));

  it('allows each entry on its ports, refuses the manager and everything else last', () => {
    const rules = config.split('\n').filter((l) => l.startsWith('http_access'));
    expect(rules).toEqual([
      'http_access deny manager',
      'http_access allow allow0 allow0_ports !not_internet',
      'http_access allow allow1 allow1_ports !not_internet',
      'http_access allow ip_literal allow2 allow2_ports',
      'http_access deny all',
    ]);
    expect(config).toContain('acl allow1 dstdomain -n .example.com');
    expect(config).toContain('acl allow1_ports port 443');
  });

  it('lets an allowed name reach only the public internet: every range that is not, and this machine\'s networks and addresses', () => {
    const withLocal = squidConfig([parseAllowEntry('example.com')], ['172.17.0.0/16', '192.0.2.2', 'fd00::2']);
    const refused = withLocal
      .split('\n')
      .filter((l) => l.startsWith('acl not_internet dst '))
      .flatMap((l) => l.split(' ').slice(3));
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16', '100.64.0.0/10', '224.0.0.0/4', '168.63.129.16/32', '0.0.0.0/8', '::/96', '::ffff:0:0/96', 'fc00::/7', 'fe80::/10', 'ff00::/8', '64:ff9b::/96', '172.17.0.0/16', '192.0.2.2', 'fd00::2']) {
      expect(refused).toContain(range);
    }
  });

  it('turns the host\'s addresses and networks into what squid takes', () => {
    expect(['192.0.2.2/24', '10.1.2.3/8', '1.2.3.4/32', 'fd00::2/64'].map(networkOf)).toEqual(['192.0.2.0/24', '10.0.0.0/8', '1.2.3.4/32', 'fd00::2/64']);
    expect(['fe80::1%eth0', '10.0.0.1/24', '::1', 'x', '1.2.3.4/40'].map(squidAddress)).toEqual(['fe80::1', '10.0.0.1/24', '::1', undefined, undefined]);
  });

  it('never resolves a name to judge a request (no DNS for refused names)', () => {
    for (const line of config.split('\n').filter((l) => l.startsWith('acl'))) {
      if (/ dstdomain | dstdom_regex /.test(line)) expect(line).toContain(' -n ');
    }
    // IP entries only match requests that name an IP, so `dst` never looks a name up.
    expect(config).toMatch(/http_access allow ip_literal allow2/);
  });

  it('with an empty list refuses everything', () => {
    expect(squidConfig([]).split('\n').filter((l) => l.startsWith('http_access'))).toEqual(['http_access deny manager', 'http_access deny all']);
  });
});

describe('parseAccessLine', () => {
  it('reads allowed and refused connections with bytes', () => {
    expect(parseAccessLine('1795424526.389 TCP_DENIED/403 CONNECT example.com:443 3445 36')).toEqual({
      time: 1795424526389,
      decision: 'refused',
      result: 'TCP_DENIED/403',
      method: 'CONNECT',
      host: 'example.com',
      port: 443,
      destination: 'example.com:443',
      bytesIn: 3445,
      bytesOut: 36,
    });
    expect(parseAccessLine('1795424526.387 TCP_MISS/200 GET 172.17.0.1:18080 316 41')?.decision).toBe('allowed');
    expect(parseAccessLine('1795424526.387 TCP_TUNNEL/200 CONNECT deb.debian.org:443 9000 500')?.decision).toBe('allowed');
    expect(parseAccessLine('1795424526.387 TCP_MISS/503 GET nowhere.example:80 300 41')?.decision).toBe('failed');
  });

  // Lines squid 5.7 wrote for requests sent raw to it (2026-11-27): every one is a refusal, and every one was dropped before.
  it.each([
    ['1795739866.985 TCP_DENIED_ABORTED/403 CONNECT %5B::1%5D:443 0 47', 'CONNECT', '%5B::1%5D:443'],
    ['1795739867.011 TCP_DENIED_ABORTED/403 CONNECT %5b:443 0 34', 'CONNECT', '%5b:443'],
    ['1795739867.116 TCP_DENIED/403 GET ex%c2%9bample.com:80 3455 42', 'GET', 'ex%c2%9bample.com:80'],
    ['1795739867.161 NONE_NONE/400 garbage -:- 3412 11', 'garbage', '-'],
    ['1795739867.890 NONE_NONE/400 GET -:- 3592 29', 'GET', '-'],
    ['1795739867.901 TCP_DENIED_ABORTED/403 CONNECT a%b:1 0 26', 'CONNECT', 'a%b:1'],
    ['1795739867.919 TCP_DENIED_ABORTED/403 GET %5Bfd00::1%5D:8 0 36', 'GET', '%5Bfd00::1%5D:8'],
  ])('keeps the refusal %s', (line, method, destination) => {
    expect(parseAccessLine(line)).toMatchObject({ decision: 'refused', method, destination });
  });

  it('escapes what a terminal would act on instead of dropping the line', () => {
    const record = parseAccessLine('1795424526.389 TCP_DENIED/403 CONNECT \u001b]0;x\u0007.com\u00c2\u009b:443 3445 36');
    expect(record).toMatchObject({ decision: 'refused', host: '%1B]0;x%07.com%C3%82%C2%9B', port: 443 });
    expect(record?.destination).toMatch(/^[\x21-\x7e]+$/);
    expect(parseAccessLine('1795424526.389 TCP_DENIED/403 GET\u009b2J x:80 3445 36')?.method).toBe('GET%C2%9B2J');
  });

  it('ignores anything else', () => {
    expect(parseAccessLine('2026/11/23 09:01:48| Starting Squid')).toBeUndefined();
    expect(parseAccessLine('')).toBeUndefined();
  });

  it('words the notice the agent sees', () => {
    expect(refusalNotice({ destination: 'example.com:443', method: 'CONNECT', result: 'TCP_DENIED/403' })).toBe(
      "network: refused example.com:443 (not in this instance's allowlist, or a private address)",
    );
    expect(refusalNotice({ destination: '-', method: 'garbage', result: 'NONE_NONE/400' })).toMatch(/could not read \(garbage .*NONE_NONE\/400/);
  });
});

describe('formatRecords', () => {
  it('names whose bytes each column counts: a refused CONNECT sent the request and received the error page', () => {
    const record = parseAccessLine('1795424526.389 TCP_DENIED/403 CONNECT example.com:443 3415 114');
    const [header, line] = formatRecords(record ? [record] : []).split('\n');
    expect(header).toMatch(/agent sent +and received/);
    expect(line).toMatch(/refused +CONNECT example\.com:443 +114 B +3415 B {2}TCP_DENIED\/403$/);
  });
});
