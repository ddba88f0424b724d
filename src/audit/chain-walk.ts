/**
 * The global chain as audit verify recomputes it from the stored hashes (chain.ts): version 1 link
 * by link, version 2 as its segment's text, hashed only when a checkpoint is compared.
 *
 * After a break it keeps a second value, with the computed hash in place of the stored one that
 * did not match: a changed event leaves the stored hash right, a changed hash the computed one; the
 * next checkpoint matches one of them, and one change stays one break.
 */
import { globalLink, segmentLink, segmentValue, type ChainCheckpoint } from "../infra/eventstore/chain.js";

export class ChainWalk {
  private version: 1 | 2 = 2;
  /** Version 1: the chain's value. Version 2: the value at the segment's checkpoint. Undefined: not known yet. */
  private base: string | undefined;
  /** Version 2: the segment's text so far (base, then a link an event), once an event was added. */
  private text: string | undefined;
  /** The alternative, while there is one: its base and text, as above. */
  private altBase: string | undefined;
  private altText: string | undefined;

  /** Whether the chain's value is known (a walk from --after without an anchor learns it at a checkpoint). */
  get known(): boolean {
    return this.base !== undefined;
  }

  /** Goes on from `value`, the chain's value at a checkpoint (or an anchor) after which it has version `version`. */
  restart(value: string, version: 1 | 2): void {
    this.base = value;
    this.version = version;
    this.text = this.altBase = this.altText = undefined;
  }

  /** The event at `position` with its stored hash `link`, and the hash computed for it, `altLink` (the same unless it broke). */
  add(position: bigint, link: string, altLink: string): void {
    if (this.base === undefined) return;
    const forks = this.altBase !== undefined || altLink !== link;
    if (this.version === 1) {
      if (forks) this.altBase = globalLink(this.altBase ?? this.base, position, altLink);
      this.base = globalLink(this.base, position, link);
      return;
    }
    const text = this.text ?? this.base;
    if (forks) {
      this.altText = (this.altText ?? this.altBase ?? text) + segmentLink(position, altLink);
      this.altBase ??= this.base;
    }
    this.text = text + segmentLink(position, link);
  }

  /** The chain's value after the last event added. */
  value(): string | undefined {
    return this.version === 2 && this.text !== undefined ? segmentValue(this.text) : this.base;
  }

  /** Whether a checkpoint's stored value is the chain's, or its alternative's. */
  matches(hash: string): boolean {
    if (hash === this.value()) return true;
    return this.altBase !== undefined && hash === (this.version === 2 && this.altText !== undefined ? segmentValue(this.altText) : this.altBase);
  }

  /**
   * Past checkpoint `c`: on from its stored value, so one change is one break; when it did not
   * match, the computed value goes on beside it as the alternative (a changed checkpoint is one
   * break too). Inside a version 2 segment (the head, an anchor) the chain cannot go on from a
   * value: it keeps its text.
   */
  pass(c: Pick<ChainCheckpoint, "hash" | "version" | "head">, matched: boolean): void {
    if (c.head && c.version === 2) return;
    const computed = matched ? undefined : this.value();
    this.restart(c.hash, c.version);
    this.altBase = computed;
  }
}
