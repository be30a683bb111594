/**
 * Which messages the model has had (issue 27: a message counts as delivered only once the model
 * has it in its context). Handing a message to the harness is not enough: a harness that fails
 * to log in, or whose API calls all fail, takes the prompt and answers with a synthetic error.
 *
 * - The messages in a session's first prompt count once the model answers anything (an
 *   assistant event that is not synthetic: a real model call carried the prompt).
 * - A message written mid-session counts once the harness has echoed it into the conversation
 *   (Claude Code's `--replay-user-messages`, matched by the uuid it was sent with) and the model
 *   has answered after that.
 * - A harness that tells nothing (no stream): what it was given counts if it exits 0.
 * What never counts stays queued for the next tick, which says it is redelivered.
 */
export class DeliveryReceipts {
  private carried: readonly string[];
  private readonly written = new Map<string, string>();
  private taken: string[] = [];

  constructor(
    carried: readonly string[],
    private readonly onInContext: ((messages: readonly string[]) => void) | undefined,
  ) {
    this.carried = carried;
  }

  /** A message written to the running harness, tagged with `uuid`. */
  wrote(uuid: string, message: string): void {
    this.written.set(uuid, message);
  }

  /** The harness took the user message tagged `uuid` into its conversation. */
  replayed(uuid: string | undefined): void {
    const message = uuid === undefined ? undefined : this.written.get(uuid);
    if (message === undefined) return;
    this.written.delete(uuid!);
    this.taken.push(message);
  }

  /** The harness printed an assistant message: a real model turn makes what it had delivered. */
  assistant(event: { mainThread: boolean; model?: string; error?: string }): void {
    if (!event.mainThread || event.error !== undefined || event.model === '<synthetic>') return;
    this.confirm();
  }

  /** A harness without a stream ended with exit code 0. */
  endedOk(): void {
    this.confirm();
  }

  private confirm(): void {
    const messages = [...this.carried, ...this.taken];
    this.carried = [];
    this.taken = [];
    if (messages.length > 0) this.onInContext?.(messages);
  }
}
