/**
 * The agent's host lock: regions are programmed side by side (shared), an inventory report is
 * discovered and sent alone (exclusive), so a report never shows a region half-programmed or
 * reaches the service before the programming's own report. First come, first served.
 */
export class HostLock {
  private sharedHolders = 0;
  private exclusiveHeld = false;
  private readonly waiting: Array<{ exclusive: boolean; go: () => void }> = [];

  shared<T>(fn: () => Promise<T>): Promise<T> {
    return this.hold(false, fn);
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.hold(true, fn);
  }

  private async hold<T>(exclusive: boolean, fn: () => Promise<T>): Promise<T> {
    if (this.waiting.length === 0 && this.free(exclusive)) this.take(exclusive);
    else await new Promise<void>((go) => this.waiting.push({ exclusive, go: () => (this.take(exclusive), go()) }));
    try {
      return await fn();
    } finally {
      if (exclusive) this.exclusiveHeld = false;
      else this.sharedHolders--;
      while (this.waiting.length > 0 && this.free(this.waiting[0]!.exclusive)) this.waiting.shift()!.go();
    }
  }

  private free(exclusive: boolean): boolean {
    return !this.exclusiveHeld && (!exclusive || this.sharedHolders === 0);
  }

  private take(exclusive: boolean): void {
    if (exclusive) this.exclusiveHeld = true;
    else this.sharedHolders++;
  }
}
