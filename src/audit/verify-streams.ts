/** What audit verify's walk (verify-walker.ts) remembers of each stream, and what a page foresees from it. */
import { GENESIS } from "../infra/eventstore/chain.js";
import type { RecordedEvent } from "../infra/eventstore/port.js";
import { Recent } from "./recent.js";

/** What the walk remembers of a stream: its last revision and hash. */
export interface Last {
  revision: number;
  hash: string | undefined;
  /** What the hash should have been, when the stored one did not match: the next link may use either. */
  computed?: string;
}

export const FIRST: Last = { revision: -1, hash: undefined };

export class StreamMemory {
  /** Recently walked streams: another one is read back from the store. */
  private readonly recent: Recent<string, Last>;
  /** The streams of an archive walked before the store (`unbounded`): kept until the store's walk moves them on. */
  private readonly archived = new Map<string, Last>();

  constructor(max: number) {
    this.recent = new Recent(max);
  }

  known(stream: string): Last | undefined {
    return this.recent.get(stream) ?? (this.archived.size > 0 ? this.archived.get(stream) : undefined);
  }

  /** The stream's previous event, read back from the store. */
  readBack(stream: string, last: Last): void {
    this.recent.set(stream, last);
  }

  /** The stream's last event as walked; `archive`: walking an archive, whose streams cannot be read back. */
  walked(stream: string, last: Last, archive: boolean): void {
    if (archive) this.archived.set(stream, last);
    else {
      this.recent.set(stream, last);
      if (this.archived.size > 0) this.archived.delete(stream);
    }
  }
}

/** A page's events' previous hashes as foreseen, and what `memory` held of each one's stream before the page. */
export interface Foresight {
  previous: (string | undefined)[];
  /** Undefined: not remembered, or the page's own. */
  known: (Last | undefined)[];
}

/** Each page event's previous hash as far as it can be foreseen: the page's own events, then `memory` (none before the walk starts). */
export function foresee(page: readonly RecordedEvent[], memory: StreamMemory | undefined): Foresight {
  const previous = new Array<string | undefined>(page.length);
  const known = new Array<Last | undefined>(page.length);
  const seen = new Map<string, RecordedEvent>();
  for (let i = 0; i < page.length; i++) {
    const e = page[i]!;
    if (e.revision === 0) previous[i] = GENESIS;
    else {
      let last: { revision: number; hash?: string } | undefined = seen.get(e.stream);
      if (last === undefined && memory !== undefined) last = known[i] = memory.known(e.stream);
      if (last !== undefined && last.revision === e.revision - 1) previous[i] = last.hash ?? GENESIS;
    }
    seen.set(e.stream, e);
  }
  return { previous, known };
}
