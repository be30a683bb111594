import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Page, chromium } from 'playwright-core';
import type { Instance } from '../../../src/config/instance.js';
import { instancePaths } from '../../../src/config/paths.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'web');
const CHROMIUM = '/usr/bin/chromium';

/** Debian's chromium, driven by playwright-core. Missing: skip, or fail under CI. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: scripts/ensure-engine.sh installs Debian's chromium`);
  return false;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export interface WebProcess {
  url: string;
  /** The base URL without the token. */
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `agent-kernel web --port 0 ...` from dist; resolves with the URL it prints. */
export function startWeb(env: NodeJS.ProcessEnv, args: string[] = []): Promise<WebProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'agent-kernel.js'), 'web', '--port', '0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        const url = line.trim();
        resolve({
          url,
          base: url.replace(/\?token=.*$/, ''),
          child,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`agent-kernel web exited with ${code}: ${stderr}`)));
  });
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** The web process has a config home of its own (`env`): give it the operator's file of an instance made in the run's. */
export async function shareOperatorConfig(instance: Pick<Instance, 'name' | 'dataDir' | 'paths'>, env: NodeJS.ProcessEnv): Promise<void> {
  const target = instancePaths(instance.name, instance.dataDir, env).operatorConfig;
  await mkdir(path.dirname(target), { recursive: true });
  await copyFile(instance.paths.operatorConfig, target);
}
