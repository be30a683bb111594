import { randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { checkHost, checkOrigin } from '../server/http-auth.js';

/**
 * Who may use the web view: a browser that once opened the URL with `?token=` (it then
 * holds an HttpOnly, SameSite=Strict session cookie), from a loopback Origin, to a loopback
 * Host (against DNS rebinding). Sessions live in this process only.
 */

export const SESSION_COOKIE = 'ak_session';

export type AuthResult =
  | { kind: 'ok' }
  | { kind: 'login'; location: string; cookie: string }
  | { kind: 'refused'; status: 401 | 403; message: string };

function sameBytes(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** The request's URL, any path (`//`, `//#/x` typed by hand: one slash; never an exception). */
export function requestUrl(req: http.IncomingMessage): URL {
  const raw = (req.url ?? '/').replace(/^\/{2,}/, '/');
  try {
    return new URL(raw.startsWith('/') ? raw : `/${raw}`, 'http://localhost');
  } catch {
    return new URL('/', 'http://localhost');
  }
}

export class WebAuth {
  private readonly sessions = new Set<string>();

  constructor(private readonly token: string) {}

  check(req: http.IncomingMessage): AuthResult {
    const host = checkHost(req.headers.host, true);
    if (host) return { kind: 'refused', status: host.status, message: host.message };
    const origin = checkOrigin(req.headers.origin);
    if (origin) return { kind: 'refused', status: origin.status, message: origin.message };
    const url = requestUrl(req);
    const given = url.searchParams.get('token');
    if (given !== null && req.method === 'GET') {
      if (!sameBytes(given, this.token)) return { kind: 'refused', status: 401, message: 'Wrong token. Open the URL agent-kernel web printed.' };
      const session = randomBytes(32).toString('base64url');
      this.sessions.add(session);
      url.searchParams.delete('token');
      return {
        kind: 'login',
        location: `${url.pathname}${url.search}`,
        cookie: `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`,
      };
    }
    const session = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (session !== undefined && [...this.sessions].some((s) => sameBytes(s, session))) return { kind: 'ok' };
    return {
      kind: 'refused',
      status: 401,
      message: 'Not signed in. Open the URL that agent-kernel web printed (it ends with ?token=...) once; the browser then keeps a session cookie.',
    };
  }
}
