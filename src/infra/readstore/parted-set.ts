/**
 * A set of strings that grows a part at a time: a `Set` grows by rehashing every entry it holds in
 * one step (at a million keys, about 100 ms of the event loop), while this one never rehashes more
 * than one part of `PART` entries. For walks that note each key they gave (a snapshot of a model
 * with a million keys) and look one up only now and then.
 */
export class PartedSet {
  private readonly parts: Array<Set<string>> = [new Set()];

  add(value: string): void {
    let last = this.parts[this.parts.length - 1]!;
    if (last.size >= PART) this.parts.push((last = new Set()));
    last.add(value);
  }

  /** One lookup a part: meant for the few values a walk must check, not for every one. */
  has(value: string): boolean {
    return this.parts.some((part) => part.has(value));
  }
}

/** Entries of one part: its largest rehash takes a few milliseconds. */
export const PART = 1 << 16;
