import { z } from 'zod';

/**
 * One line of an instance's event log (`events.jsonl` in its host-private state): what
 * happened, when, and who saw it. Written by the server (terminals), the runner (ticks,
 * messages) and the web view (a person typing); read by `agent-kernel events` and the web view.
 */

const base = { time: z.string(), tick: z.int().min(0).optional() };
const tty = z.int().min(0).max(99);

export const instanceEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ ...base, type: z.literal('tty.opened'), tty, command: z.string() }),
  z.strictObject({ ...base, type: z.literal('tty.closed'), tty, archivedTo: z.string().optional() }),
  z.strictObject({ ...base, type: z.literal('tty.died'), tty, exitCode: z.int().optional() }),
  z.strictObject({ ...base, type: z.literal('command.started'), tty, command: z.string(), recording: z.string().optional() }),
  z.strictObject({
    ...base,
    type: z.literal('command.finished'),
    tty,
    command: z.string().optional(),
    exitCode: z.int().optional(),
    durationMs: z.number().optional(),
    recording: z.string().optional(),
  }),
  z.strictObject({ ...base, type: z.literal('tty.waiting-for-input'), tty, program: z.string() }),
  z.strictObject({ ...base, type: z.literal('tick.started'), trigger: z.string().optional() }),
  z.strictObject({
    ...base,
    type: z.literal('tick.ended'),
    status: z.string(),
    durationMs: z.number().optional(),
    errorClass: z.string().optional(),
  }),
  // The post office (src/mail). `from` and `to` are instance names, "operator" (or "operator (label)"), or
  // "self" for a file the agent put in its own inbox/; the host stamped them, never a file the agent wrote.
  z.strictObject({ ...base, type: z.literal('message.sent'), id: z.string(), from: z.string(), to: z.string(), replyTo: z.string().optional() }),
  z.strictObject({ ...base, type: z.literal('message.received'), id: z.string(), from: z.string(), to: z.string(), replyTo: z.string().optional() }),
  z.strictObject({
    ...base,
    type: z.literal('message.delivered'),
    id: z.string(),
    from: z.string().optional(),
    to: z.string().optional(),
    replyTo: z.string().optional(),
    /** Ticks that had it and ended before the model did. */
    redelivered: z.int().min(1).optional(),
  }),
  z.strictObject({ ...base, type: z.literal('message.refused'), from: z.string(), to: z.string().optional(), reason: z.string(), file: z.string().optional() }),
  /** watch held a tick back: an operator's limit (runner.limits) was reached; the work waits. */
  z.strictObject({ ...base, type: z.literal('tick.limited'), limit: z.string(), until: z.string(), waiting: z.int().min(0).optional() }),
  z.strictObject({ ...base, type: z.literal('person.typed'), tty, bytes: z.int().min(0), key: z.string().optional() }),
  /** The operator took back a queued message before its model had it (mail/withdraw.ts). */
  z.strictObject({
    ...base,
    type: z.literal('message.withdrawn'),
    id: z.string(),
    from: z.string(),
    to: z.string(),
    text: z.string().optional(),
    /** Ticks that had it in their prompt and ended before the model did. */
    handedTo: z.array(z.int().min(0)).optional(),
  }),
  // What runs for an instance, and why it stops or waits (runner/watch, runner/tick).
  z.strictObject({ ...base, type: z.literal('instance.paused'), reason: z.string() }),
  z.strictObject({ ...base, type: z.literal('instance.resumed'), by: z.string().optional() }),
  z.strictObject({ ...base, type: z.literal('watch.started'), pid: z.int().min(1) }),
  z.strictObject({ ...base, type: z.literal('watch.stopped'), pid: z.int().min(1), reason: z.string().optional() }),
  z.strictObject({ ...base, type: z.literal('kernel.started'), pid: z.int().min(1).optional() }),
  z.strictObject({ ...base, type: z.literal('kernel.stopped'), reason: z.string().optional() }),
  /** A tick's attempt failed for a reason that may pass: the next one is at `nextAt` (runner/tick retry policy). */
  z.strictObject({ ...base, type: z.literal('tick.retry'), attempt: z.int().min(1), cause: z.string(), nextAt: z.string(), deadline: z.string().optional() }),
]);

export type InstanceEvent = z.output<typeof instanceEventSchema>;
export type InstanceEventType = InstanceEvent['type'];

/** What a writer supplies: everything but the time, which the log stamps. */
export type NewInstanceEvent = InstanceEvent extends infer E ? (E extends InstanceEvent ? Omit<E, 'time'> & { time?: string } : never) : never;

/** Pure: one line of the log, or undefined when it is not an event (a torn or foreign line). */
export function parseEventLine(line: string): InstanceEvent | undefined {
  if (!line.trim()) return undefined;
  try {
    const parsed = instanceEventSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
