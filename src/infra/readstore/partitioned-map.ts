import { flat } from "./flat-text.js";

/**
 * A map of read-store keys kept one inner map per projection prefix (`{name}:`, the key's start),
 * so that one projection's keys are walked (a snapshot, a drop) without the others': a small
 * model beside a fleet-sized one costs its own size. Keys without such a prefix share one part.
 */
export class PartitionedMap<V> {
  private readonly parts = new Map<string, Map<string, V>>();

  get(key: string): V | undefined {
    return this.parts.get(prefixOf(key))?.get(key);
  }

  set(key: string, value: V): void {
    const prefix = prefixOf(key);
    let part = this.parts.get(prefix);
    if (!part) this.parts.set(prefix, (part = new Map()));
    part.set(part.has(key) ? key : flat(key), value);
  }

  delete(key: string): void {
    // An emptied part stays: a walk of it goes on seeing the keys set again.
    this.parts.get(prefixOf(key))?.delete(key);
  }

  clear(): void {
    this.parts.clear();
  }

  /** The keys starting with `prefix` (a projection's `{name}:`), live: changes show while it is walked. */
  withPrefix(prefix: string): ReadonlyMap<string, V> {
    return this.parts.get(prefix) ?? EMPTY;
  }

  /** Each projection's keys (and the part of those without a prefix), live. */
  partitions(): IterableIterator<ReadonlyMap<string, V>> {
    return this.parts.values();
  }

  /** Forgets every key starting with `prefix`. */
  dropPrefix(prefix: string): void {
    this.parts.delete(prefix);
  }
}

const EMPTY: ReadonlyMap<string, never> = new Map<string, never>();

/** `{name}:` of `{name}:rest`, else "". */
export function prefixOf(key: string): string {
  if (key.charCodeAt(0) !== 0x7b) return "";
  const end = key.indexOf("}:");
  return end > 0 ? key.slice(0, end + 2) : "";
}
