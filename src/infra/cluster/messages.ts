/**
 * What the API workers and the primary process say to each other over node:cluster's IPC channel
 * (docs/architecture.md, "API workers"). The channel uses the advanced serialization (structured
 * clone), so bigint positions travel as they are. Messages are tagged `cyborg`; anything else on
 * the channel (the rate limiter's own messages) is not ours and is ignored.
 */
import type { AppendResult, AppendStep } from "../eventstore/port.js";
import type { EncodedError } from "./error-codec.js";

/** A worker asks the primary to append: one stream (`single`) or a sequence, at the expected revisions. */
export interface AppendRequest {
  cyborg: "append";
  id: number;
  steps: readonly AppendStep[];
  single: boolean;
}

/** The primary's answer: the steps appended, and why the next was refused (`refusal`) or what failed (`error`). */
export interface AppendAnswer {
  cyborg: "appended";
  id: number;
  appended: AppendResult[];
  refusal?: EncodedError;
  error?: EncodedError;
}

/** The primary committed to the log (any process's append, retention): read the log again. */
export interface Committed {
  cyborg: "committed";
}

/** A pub/sub message for every process (agent report times). */
export interface Published {
  cyborg: "publish";
  topic: string;
  payload: unknown;
}

/** A worker serves: its URL, or why it could not start. */
export interface WorkerStarted {
  cyborg: "started";
  url?: string;
  error?: string;
}

/**
 * Read-your-writes across workers: a worker asks that every worker's read models reach `position`
 * (`await`); the primary asks each worker (`reach`), which answers once its models show it
 * (`reached`), and then answers the first (`awaited`).
 */
export interface AwaitPosition {
  cyborg: "await" | "reach";
  id: number;
  position: bigint;
}

export interface PositionReached {
  cyborg: "reached" | "awaited";
  id: number;
}

export type ClusterMessage = AppendRequest | AppendAnswer | Committed | Published | WorkerStarted | AwaitPosition | PositionReached;

export const isClusterMessage = (msg: unknown): msg is ClusterMessage =>
  typeof msg === "object" && msg !== null && typeof (msg as { cyborg?: unknown }).cyborg === "string";

/** One end of an IPC channel: a worker's to the primary, or the primary's to one worker. */
export interface Channel {
  send(msg: ClusterMessage): void;
  /** Calls `fn` with each of our messages; the returned function stops. */
  onMessage(fn: (msg: ClusterMessage) => void): () => void;
  /** Calls `fn` once the other end is gone. */
  onClose(fn: () => void): void;
}

/** What both ends of node:cluster's IPC offer: a worker process, and the primary's Worker object. */
interface IpcEnd {
  send?(msg: unknown): unknown;
  on(e: "message", fn: (msg: unknown) => void): unknown;
  off(e: "message", fn: (msg: unknown) => void): unknown;
  once(e: "disconnect", fn: () => void): unknown;
}

/** A channel over `end`, which sends only while `connected()`. */
function ipcChannel(end: IpcEnd, connected: () => boolean): Channel {
  return {
    send: (msg) => {
      if (connected()) end.send!(msg);
    },
    onMessage: (fn) => {
      const listener = (msg: unknown) => {
        if (isClusterMessage(msg)) fn(msg);
      };
      end.on("message", listener);
      return () => end.off("message", listener);
    },
    onClose: (fn) => void end.once("disconnect", fn),
  };
}

/** The worker's end, over `process.send`. */
export function primaryChannel(proc: NodeJS.Process = process): Channel {
  return ipcChannel(proc, () => proc.connected);
}

/** The primary's end of one worker's channel. */
export function workerChannel(worker: IpcEnd & { send(msg: unknown): boolean; isConnected(): boolean }): Channel {
  return ipcChannel(worker, () => worker.isConnected());
}
