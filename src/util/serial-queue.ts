/**
 * Runs tasks one at a time, in the order they were queued. A task that fails rejects its own
 * promise only: the tasks after it still run.
 */
export class SerialQueue {
  /** Settles when the last queued task has; never rejects. */
  private tail: Promise<unknown> = Promise.resolve();

  /** Run `task` once every task queued before it has settled. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every task queued so far has settled (never rejects). */
  async idle(): Promise<void> {
    await this.tail;
  }
}
