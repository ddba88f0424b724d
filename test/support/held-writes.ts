import type { ReadStore, Write } from "../../src/infra/readstore/port.js";

/**
 * Wraps read stores so that their writes chosen by `holds` wait while closed (it starts open);
 * `held` resolves when such a write is waiting, so a test looks at a projector that is behind, or
 * at a store that stays lost, at a known point.
 */
export class HeldWrites {
  held: Promise<void> = Promise.resolve();
  private opened: Promise<void> | undefined;
  private release = () => {};
  private notify = () => {};

  constructor(private readonly holds: (projection: string, writes: readonly Write[]) => boolean = () => true) {}

  wrap<S extends ReadStore>(store: S): S {
    return new Proxy(store, {
      get: (target, prop) => {
        if (prop === "applyBatch") {
          return async (...args: Parameters<ReadStore["applyBatch"]>) => {
            if (this.opened && this.holds(args[0], args[1])) {
              this.notify();
              await this.opened;
            }
            return target.applyBatch(...args);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  close(): void {
    this.opened = new Promise((resolve) => (this.release = resolve));
    this.held = new Promise((resolve) => (this.notify = resolve));
  }

  open(): void {
    this.opened = undefined;
    this.release();
  }
}
