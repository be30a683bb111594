import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CodedError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';

/**
 * The guards in front of the HTTP transport: a bearer token and an Origin check against
 * DNS rebinding. The checks are pure functions; resolveToken does the file work.
 */

export const TOKEN_ENV = 'AGENT_KERNEL_TOKEN';
const MIN_TOKEN_LENGTH = 16;

export interface Refusal {
  status: 401 | 403;
  error: string;
  message: string;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname.endsWith('.localhost');
}

/**
 * Pure: may a request with this Origin header talk to us? Clients that are not browsers
 * send none; a browser page may only come from a loopback origin. Anything else could be
 * a DNS-rebinding page and gets 403.
 */
export function checkOrigin(origin: string | undefined): Refusal | undefined {
  if (origin === undefined || origin === '') return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return { status: 403, error: 'forbidden_origin', message: `Origin ${JSON.stringify(origin)} is not a valid origin; only loopback origins may connect.` };
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHostname(url.hostname)) return undefined;
  return {
    status: 403,
    error: 'forbidden_origin',
    message: `Origin ${origin} may not use this server: only clients without an Origin header or from a loopback origin (http://localhost, http://127.0.0.1) are allowed.`,
  };
}

/**
 * Pure: when we listen on loopback only, a Host header that names another host means the
 * request came through a rebound DNS name: refuse it.
 */
export function checkHost(host: string | undefined, listeningOnLoopback: boolean): Refusal | undefined {
  if (!listeningOnLoopback || host === undefined) return undefined;
  const hostname = host.replace(/:\d+$/, '');
  if (isLoopbackHostname(hostname)) return undefined;
  return { status: 403, error: 'forbidden_host', message: `Host ${host} is not this server's address; connect to 127.0.0.1 or localhost.` };
}

/** Pure: is the Authorization header a bearer token equal to `token`? Compared in constant time. */
export function checkBearer(authorization: string | undefined, token: string, tokenHint: string): Refusal | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) {
    return {
      status: 401,
      error: 'missing_token',
      message: `Missing bearer token: send the header "Authorization: Bearer <token>". ${tokenHint}`,
    };
  }
  const given = Buffer.from(match[1] ?? '');
  const expected = Buffer.from(token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { status: 401, error: 'wrong_token', message: `Wrong bearer token. ${tokenHint}` };
  }
  return undefined;
}

export interface ResolvedToken {
  token: string;
  /** Where it came from, for the hint in 401 answers and the start-up line. */
  source: string;
  /** Set when the token was generated now (print it once). */
  generated: boolean;
}

/**
 * The HTTP token: AGENT_KERNEL_TOKEN, else --token-file, else `defaultFile` (created with a
 * random token and mode 0600 when absent).
 */
export async function resolveToken(options: { env: NodeJS.ProcessEnv; tokenFile?: string; defaultFile: string }): Promise<ResolvedToken> {
  const fromEnv = options.env[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.trim().length < MIN_TOKEN_LENGTH) {
      throw new CodedError('USAGE', `${TOKEN_ENV} is too short: use at least ${MIN_TOKEN_LENGTH} characters (for example: openssl rand -hex 32).`);
    }
    return { token: fromEnv.trim(), source: `the ${TOKEN_ENV} environment variable`, generated: false };
  }
  if (options.tokenFile !== undefined) {
    const file = path.resolve(options.tokenFile);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CodedError('USAGE', `Cannot read the token file ${file}: ${(error as Error).message}. Create it (for example: openssl rand -hex 32 > ${file}; chmod 600 ${file}).`, { cause: error });
    }
    const token = text.trim();
    if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw new CodedError('USAGE', `The token in ${file} must be one word of at least ${MIN_TOKEN_LENGTH} characters.`);
    }
    return { token, source: file, generated: false };
  }
  const file = options.defaultFile;
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= MIN_TOKEN_LENGTH) {
      // Someone loosened the mode: put it back to owner-only.
      if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
      return { token: existing, source: file, generated: false };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('base64url');
  await writeFileAtomic(file, token + '\n', 0o600);
  await chmod(file, 0o600);
  return { token, source: file, generated: true };
}
