import { resolveInstance } from '../../../../config/instance.js';
import type { Instance } from '../../../../config/instance.js';
import { createLogger } from '../../../../log/logger.js';
import { findSnapshot, removeSnapshot, snapshotNow } from '../../../../snapshot/actions.js';
import { formatBytes } from '../../../../snapshot/budget.js';
import { type SnapshotDiff, type TreeDiff, diffSnapshots, imageDpkgStatus } from '../../../../snapshot/diff.js';
import { connectEngine, engineSetting } from '../../../../sandbox/engine/engine.js';
import { imageTag } from '../../../../sandbox/engine/image.js';
import type { Manifest } from '../../../../snapshot/manifest.js';
import { storeBytes } from '../../../../snapshot/prune.js';
import { storeOf } from '../../../../snapshot/take.js';
import { parseCommandArgs } from '../../args.js';
import { type Command, EXIT, out } from '../../command.js';

const USAGE = 'snapshot <name> [-m <note>] | snapshot rm <name> <id> | snapshot diff <name> <a> [<b>]';

async function take(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, {
    usage: `kernel-runner ${USAGE}`,
    options: { message: { type: 'string', short: 'm' } },
    positionals: { min: 1, max: 1 },
    missing: 'Name an instance.',
  });
  const instance = await resolveInstance(positionals[0] as string);
  const started = Date.now();
  const logger = createLogger({ process: 'snapshot', logDir: instance.paths.logs });
  const manifest = await snapshotNow(instance, { ...(values.message === undefined ? {} : { note: values.message }), logger });
  out(
    `Snapshot ${manifest.id} of ${instance.name} taken in ${((Date.now() - started) / 1000).toFixed(1)} s: ${manifest.data.length} entries of the data directory, ` +
      `${manifest.container.entries.length} changed and ${manifest.container.deleted.length} deleted in the container, ${formatBytes(manifest.bytes)} (${formatBytes(manifest.newBytes)} new on disk).\n` +
      skippedLines(manifest) +
      `Roll back to it: kernel-runner rollback ${instance.name} ${manifest.id}\n`,
  );
  return EXIT.OK;
}

/**
 * Pure: a path the agent named (a file in its data directory or container), on one line: a
 * newline in a file name is shown as an escape, so a name cannot forge lines of the listing
 * (`x\n  - etc/passwd` is one added file, not an added and a removed one). out() makes the
 * other control characters visible.
 */
export function shownPath(file: string): string {
  return file.replace(/\n/g, '\\u000a');
}

export function skippedLines(manifest: Pick<Manifest, 'skipped'>): string {
  if (manifest.skipped.length === 0) return '';
  const shown = manifest.skipped.slice(0, 5).map((s) => `  ${s.tree}: ${shownPath(s.path)}: ${shownPath(s.why)}\n`).join('');
  return `Left out (${manifest.skipped.length}):\n${shown}${manifest.skipped.length > 5 ? `  … and ${manifest.skipped.length - 5} more\n` : ''}`;
}

async function remove(args: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(args, { usage: `kernel-runner ${USAGE}`, options: {}, positionals: { min: 2, max: 2 }, missing: 'Name an instance and a snapshot id.' });
  const instance = await resolveInstance(positionals[0] as string);
  const { freedBytes } = await removeSnapshot(instance, positionals[1] as string);
  out(`Removed snapshot ${positionals[1] as string} of ${instance.name} (${formatBytes(freedBytes)} freed; content other snapshots share is kept).\n`);
  return EXIT.OK;
}

function section(title: string, diff: TreeDiff): string {
  const lines = [...diff.added.map((p) => `  + ${shownPath(p)}`), ...diff.removed.map((p) => `  - ${shownPath(p)}`), ...diff.changed.map((p) => `  ~ ${shownPath(p)}`)];
  if (lines.length === 0) return `${title}: no change\n`;
  const shown = lines.slice(0, 200);
  return `${title} (${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed):\n${shown.join('\n')}\n${lines.length > shown.length ? `  … and ${lines.length - shown.length} more\n` : ''}`;
}

export function renderDiff(a: string, b: string, diff: SnapshotDiff): string {
  return `From snapshot ${a} to ${b}:\n` + section('Data directory', diff.data) + section('Packages (dpkg)', diff.packages) + section('Container files', diff.container);
}

async function diff(args: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(args, { usage: `kernel-runner ${USAGE}`, options: {}, positionals: { min: 2, max: 3 }, missing: 'Name an instance and a snapshot id.' });
  const instance: Instance = await resolveInstance(positionals[0] as string);
  const a = await findSnapshot(instance, { id: positionals[1] as string });
  const b = positionals[2] === undefined ? await findSnapshot(instance, {}) : await findSnapshot(instance, { id: positionals[2] });
  const { store } = storeOf(instance);
  const imageHash = a.container.imageHash ?? b.container.imageHash;
  const imageStatus = async () => (imageHash === undefined || instance.config.container.backend === 'host' ? '' : imageDpkgStatus(await connectEngine({ socket: engineSetting(instance.config.container) }), imageTag(instance.name, imageHash)));
  const result = await diffSnapshots(a, b, store, imageStatus);
  out(renderDiff(a.id, b.id, result));
  return EXIT.OK;
}

export const snapshotCommand: Command = {
  name: 'snapshot',
  summary: 'Save the whole instance now (data directory, what was installed in its container, terminals and scrollback); rm removes one, diff shows what changed between two.',
  usage: USAGE,
  options: [['-m, --message <note>', 'a note kept with the snapshot (kernel-runner snapshots shows it)']],
  examples: ['kernel-runner snapshot scout -m "before the upgrade"', 'kernel-runner snapshot diff scout 6', 'kernel-runner snapshot rm scout 6'],
  run(args) {
    if (args[0] === 'rm') return remove(args.slice(1));
    if (args[0] === 'diff') return diff(args.slice(1));
    return take(args);
  },
};

/** Pure: the table `kernel-runner snapshots` prints. */
export function renderSnapshots(name: string, manifests: readonly Manifest[], diskBytes: number): string {
  if (manifests.length === 0) return `${name} has no snapshot yet: kernel-runner snapshot ${name} takes one (one is taken before every tick unless snapshots.before_tick is false).\n`;
  const rows = manifests.map((m) => [m.id, m.createdAt.replace(/\.\d+Z$/, 'Z'), m.trigger, m.tick === undefined ? '' : String(m.tick), formatBytes(m.bytes), formatBytes(m.newBytes), m.note ?? '']);
  const head = ['ID', 'TIME', 'TRIGGER', 'TICK', 'SIZE', 'NEW', 'NOTE'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return `${line(head)}\n${rows.map(line).join('\n')}\n${manifests.length} snapshot(s), ${formatBytes(diskBytes)} on disk.\n`;
}

export const snapshotsCommand: Command = {
  name: 'snapshots',
  summary: "List an instance's snapshots: id, time, trigger, tick, size, note.",
  usage: 'snapshots <name>',
  examples: ['kernel-runner snapshots scout'],
  async run(args) {
    const { positionals } = parseCommandArgs(args, { usage: 'kernel-runner snapshots <name>', options: {}, positionals: { min: 1, max: 1 }, missing: 'Name an instance.' });
    const instance = await resolveInstance(positionals[0] as string);
    const { shelf } = storeOf(instance);
    out(renderSnapshots(instance.name, await shelf.all(), await storeBytes(instance)));
    return EXIT.OK;
  },
};
