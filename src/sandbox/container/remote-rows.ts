import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Instance } from '../../config/instance.js';
import { describeError, isCodedError } from '../../errors.js';
import { type Engine, connectEngine, dataVolumeName, describeEngine, statusCode, tlsCertDir, usesTls } from '../engine/engine.js';
import { LABEL } from '../engine/image.js';
import type { CheckRow } from './preflight.js';

/**
 * `agent-kernel doctor`'s rows for an engine on another machine (tcp:// or ssh://): whether the
 * client's TLS files are usable, whether the engine answers (and if not, which of the usual
 * causes it is, with its fix), and the volume there that holds the instance's data directory.
 * The TLS files are the operator's (DOCKER_CERT_PATH or ~/.docker), never the agent's.
 */

export interface RemoteRowsOptions {
  env?: NodeJS.ProcessEnv;
  instance?: Instance | undefined;
  /** For the certificates' dates; now by default. */
  now?: Date;
}

const TLS_ROW = 'engine tls';
const ENGINE_ROW = 'engine';
const VOLUME_ROW = 'data volume';

/** Pure: what the engine's answer (or its absence) means, with the fix. Messages are Node's and the engine's. */
export function remoteFailure(message: string, address: string, certDir: string): { detail: string; fix: string } {
  const where = address.replace(/^[a-z]+:\/\//, '');
  const port = /:(\d+)$/.exec(where)?.[1] ?? '2376';
  const serve = `on the engine's machine: dockerd -H tcp://0.0.0.0:${port} --tlsverify --tlscacert ca.pem --tlscert server-cert.pem --tlskey server-key.pem`;
  const cases: { test: RegExp; detail: string; fix: string }[] = [
    { test: /ECONNREFUSED/, detail: `nothing listens at ${where}`, fix: `start the engine there, listening on that port (${serve}), or correct container.engine` },
    { test: /ENOTFOUND|EAI_AGAIN/, detail: `the name in ${address} does not resolve`, fix: 'correct the host in container.engine (a name this machine resolves, or an IP address)' },
    {
      test: /ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|no answer within/,
      detail: `no answer from ${where}`,
      fix: `check the address in container.engine, that the engine's machine is up, and that a firewall lets this machine reach port ${port}`,
    },
    {
      test: /altnames|does not match certificate|ERR_TLS_CERT_ALTNAME/i,
      detail: `the engine's certificate is not for ${where}`,
      fix: 'reach the engine by a name or IP its certificate lists (subjectAltName), or give it a certificate for this address',
    },
    {
      test: /self[- ]signed|unable to (?:verify|get (?:local )?issuer)|UNABLE_TO_|certificate verify failed/i,
      detail: `the engine's certificate is not signed by ${path.join(certDir, 'ca.pem')}`,
      fix: `put the CA that signed the engine's certificate (its --tlscert) in ${path.join(certDir, 'ca.pem')}`,
    },
    {
      test: /bad certificate|certificate required|unknown ca|alert (?:certificate|number 4[0-9])/i,
      detail: `the engine refused this machine's certificate (${path.join(certDir, 'cert.pem')})`,
      fix: `sign ${path.join(certDir, 'cert.pem')} with the CA the engine trusts (its --tlscacert), for client use (extendedKeyUsage=clientAuth)`,
    },
    {
      test: /certificate has expired|CERT_HAS_EXPIRED/i,
      detail: "the engine's certificate has expired",
      fix: 'give the engine a new certificate (its --tlscert), signed by the same CA',
    },
    {
      test: /wrong version number|EPROTO|packet length too long/i,
      detail: `${where} does not speak TLS (a plain HTTP engine?)`,
      fix: `serve the engine with TLS (${serve}), or, only on a trusted network, reach it without: DOCKER_TLS_VERIFY unset and port 2375`,
    },
  ];
  const known = cases.find((entry) => entry.test.test(message));
  const said = message.split('\n')[0] ?? '';
  if (known) return { detail: `${known.detail} (${said})`, fix: known.fix };
  return { detail: said, fix: `check the engine at ${address} (${serve}) and container.engine` };
}

interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** Pure: whether the client's certificate, key and CA can make a connection at `now`; the problem and its fix when not. */
export function judgeTlsFiles(files: TlsFiles, certDir: string, now: Date): { ok: true; detail: string } | { ok: false; detail: string; fix: string } {
  const file = (name: string) => path.join(certDir, name);
  const remake = `make a new client certificate signed by the CA the engine trusts, as ${file('cert.pem')} with its key ${file('key.pem')}`;
  let ca: X509Certificate;
  let cert: X509Certificate;
  try {
    ca = new X509Certificate(files.ca);
  } catch (error) {
    return { ok: false, detail: `${file('ca.pem')} is not a PEM certificate (${describeError(error)})`, fix: `put the CA that signed the engine's certificate there` };
  }
  try {
    cert = new X509Certificate(files.cert);
  } catch (error) {
    return { ok: false, detail: `${file('cert.pem')} is not a PEM certificate (${describeError(error)})`, fix: remake };
  }
  for (const [name, x509, fix] of [
    ['ca.pem', ca, `put the engine's current CA in ${file('ca.pem')}`],
    ['cert.pem', cert, remake],
  ] as const) {
    if (now.getTime() > Date.parse(x509.validTo)) return { ok: false, detail: `${file(name)} expired on ${x509.validTo}`, fix };
    if (now.getTime() < Date.parse(x509.validFrom)) return { ok: false, detail: `${file(name)} is not valid before ${x509.validFrom} (is this machine's clock right?)`, fix: `check the clock (date -u), or ${fix}` };
  }
  try {
    if (!cert.checkPrivateKey(createPrivateKey(files.key))) return { ok: false, detail: `${file('key.pem')} is not the key of ${file('cert.pem')}`, fix: `put the key that goes with cert.pem in ${file('key.pem')}, or ${remake}` };
  } catch (error) {
    return { ok: false, detail: `${file('key.pem')} is not a usable private key (${describeError(error)})`, fix: `put cert.pem's key there, unencrypted (PEM), or ${remake}` };
  }
  const subject = (x509: X509Certificate) => x509.subject.split('\n').find((line) => line.startsWith('CN='))?.slice(3) ?? x509.subject.split('\n')[0];
  return { ok: true, detail: `${certDir}: client ${subject(cert)} until ${cert.validTo}, CA ${subject(ca)} until ${ca.validTo}` };
}

async function tlsRow(address: string, env: NodeJS.ProcessEnv, now: Date): Promise<CheckRow | undefined> {
  if (!address.startsWith('tcp://') && !address.startsWith('http')) return undefined;
  const url = new URL(address);
  const certDir = tlsCertDir(env);
  if (!usesTls(url, env)) {
    const loopback = /^(?:127\.|localhost$|\[::1\]$)/.test(url.hostname);
    if (loopback) return { name: TLS_ROW, status: 'ok', detail: `none, on this machine's loopback (${url.host}: a tunnel?)` };
    return {
      name: TLS_ROW,
      status: 'failed',
      detail: `none: whoever reaches ${url.host} controls that engine, and so every agent's container on it`,
      fix: `serve the engine with TLS and set DOCKER_TLS_VERIFY=1 with the client's files in ${certDir} (docs/engines.md), or use ssh://`,
    };
  }
  const files: Partial<TlsFiles> = {};
  const missing: string[] = [];
  for (const name of ['ca', 'cert', 'key'] as const) {
    try {
      files[name] = await readFile(path.join(certDir, `${name}.pem`), 'utf8');
    } catch (error) {
      missing.push(`${name}.pem (${describeError(error).split('\n')[0]})`);
    }
  }
  if (missing.length > 0) {
    return {
      name: TLS_ROW,
      status: 'not-ready',
      detail: `${certDir} lacks ${missing.join(', ')}`,
      fix: `put the CA (ca.pem) and this machine's client certificate and key (cert.pem, key.pem) in ${certDir}, or point DOCKER_CERT_PATH at the folder that has them`,
    };
  }
  const judged = judgeTlsFiles(files as TlsFiles, certDir, now);
  return judged.ok ? { name: TLS_ROW, status: 'ok', detail: judged.detail } : { name: TLS_ROW, status: 'failed', detail: judged.detail, fix: judged.fix };
}

/** The volume that holds the instance's data directory there: ours, someone else's, or not made yet. */
async function volumeRow(engine: Engine, instance: Instance): Promise<CheckRow> {
  const name = dataVolumeName(instance.name);
  let found: { Labels?: Record<string, string> | null; CreatedAt?: string } | undefined;
  try {
    found = (await engine.docker.getVolume(name).inspect()) as typeof found;
  } catch (error) {
    if (statusCode(error) === 404) return { name: VOLUME_ROW, status: 'ok', detail: `${name} not made yet: agent-kernel container up ${instance.name} makes it there` };
    return { name: VOLUME_ROW, status: 'failed', detail: `${name} cannot be inspected: ${describeError(error).split('\n')[0]}`, fix: `check the engine at ${engine.address}` };
  }
  if (found?.Labels?.[LABEL.instance] !== instance.name) {
    return {
      name: VOLUME_ROW,
      status: 'failed',
      detail: `${name} on ${engine.address} was not made by agent-kernel for ${instance.name} (no ${LABEL.instance}=${instance.name} label), so it is not used`,
      fix: `remove or rename that volume there (docker volume rm ${name}), or use another instance name`,
    };
  }
  const dataDir = found.Labels[LABEL.dataDir];
  const moved = dataDir !== undefined && dataDir !== instance.dataDir ? `; made for ${dataDir}, mounted at ${instance.dataDir}` : '';
  return { name: VOLUME_ROW, status: 'ok', detail: `${name} on ${engine.address}${found.CreatedAt ? `, made ${found.CreatedAt}` : ''}${moved}: the agent's data directory` };
}

/**
 * The rows for a remote engine, and the engine when it answered (for the rows that build and run
 * on it). Never throws: a failure is a row.
 */
export async function remoteEngineRows(address: string, options: RemoteRowsOptions = {}): Promise<{ rows: CheckRow[]; engine?: Engine }> {
  const env = options.env ?? process.env;
  const rows: CheckRow[] = [];
  const tls = await tlsRow(address, env, options.now ?? new Date());
  if (tls) rows.push(tls);
  if (tls?.status === 'not-ready') {
    rows.push({ name: ENGINE_ROW, status: 'skipped', detail: `${address}: no TLS files to reach it with` });
    return { rows };
  }
  let engine: Engine;
  try {
    engine = await connectEngine({ socket: address, env, timeoutMs: 10_000, fresh: true });
  } catch (error) {
    const tried = isCodedError(error, 'ENGINE_UNREACHABLE') ? ((error.details.tried ?? []) as { error: string }[]).map((t) => t.error).join('; ') : describeError(error);
    const { detail, fix } = remoteFailure(tried, address, tlsCertDir(env));
    rows.push({ name: ENGINE_ROW, status: 'not-ready', detail: `${address} (remote): ${detail}`, fix });
    return { rows };
  }
  rows.push({ name: ENGINE_ROW, status: 'ok', detail: `${describeEngine(engine)} (remote: the data directory is a volume there)` });
  if (options.instance) rows.push(await volumeRow(engine, options.instance));
  return { rows, engine };
}
