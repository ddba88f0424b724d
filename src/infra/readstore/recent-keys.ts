/**
 * The keys written lately, oldest first, up to `limit`: each is kept in the form that is quick to
 * change (a map of fields, a SortedSet) while it is among them, and handed to `settle` once `limit`
 * newer keys have been written since, to be kept in its compact form (its text) again. A key that
 * is written many times in a row (an object through its lifecycle, a model being rebuilt) is parsed
 * once, not at every write, and at most `limit` keys are held in the larger form.
 */
export class RecentKeys {
  private readonly keys = new Set<string>();

  constructor(
    private readonly limit: number,
    private readonly settle: (key: string) => void,
  ) {}

  /** `key` was just put in its quick-to-change form. */
  add(key: string): void {
    if (this.keys.has(key)) return;
    this.keys.add(key);
    if (this.keys.size <= this.limit) return;
    const oldest = this.keys.values().next().value!;
    this.keys.delete(oldest);
    this.settle(oldest);
  }

  clear(): void {
    this.keys.clear();
  }
}
