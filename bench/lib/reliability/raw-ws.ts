/**
 * A bare graphql-transport-ws client for the fuzzer: one socket per caller, operations
 * multiplexed by id, and the subscribe payload sent as the raw JSON text the generator made (the
 * graphql-ws client would re-serialize it, and cannot send a malformed message). When the server
 * closes the socket, every operation on it ends with the close code and reason; the next
 * operation opens a new socket.
 */
import WebSocket from "ws";
import type { WsAnswer } from "./wire.js";

interface Pending {
  answer: WsAnswer;
  idleMs: number;
  /** Stop at the first result (a subscription's first event is all the caller waits for). */
  firstOnly: boolean;
  timer?: NodeJS.Timeout;
  done: () => void;
}

class Socket {
  readonly ready: Promise<void>;
  readonly pending = new Map<string, Pending>();
  private readonly ws: WebSocket;
  closed = false;

  constructor(url: string, authorization: string | undefined) {
    this.ws = new WebSocket(url.replace(/^http/, "ws"), "graphql-transport-ws");
    this.ready = new Promise((resolve, reject) => {
      this.ws.once("open", () => this.ws.send(JSON.stringify({ type: "connection_init", payload: authorization ? { authorization } : {} })));
      this.ws.on("message", (data) => {
        let msg: { type?: string; id?: string; payload?: unknown };
        try {
          msg = JSON.parse(String(data));
        } catch {
          return;
        }
        if (msg.type === "connection_ack") return resolve();
        if (msg.type === "ping") return this.ws.send(JSON.stringify({ type: "pong" }));
        const p = msg.id === undefined ? undefined : this.pending.get(msg.id);
        if (!p) return;
        if (msg.type === "next") {
          p.answer.nexts.push(msg.payload as WsAnswer["nexts"][number]);
          if (p.firstOnly) {
            this.send(JSON.stringify({ id: msg.id, type: "complete" }));
            this.finish(msg.id!);
          } else this.arm(msg.id!, p);
        } else if (msg.type === "error") {
          p.answer.error = msg.payload;
          this.finish(msg.id!);
        } else if (msg.type === "complete") {
          p.answer.completed = true;
          this.finish(msg.id!);
        }
      });
      this.ws.on("close", (code, reason) => {
        this.closed = true;
        reject(Object.assign(new Error(`closed ${code}`), { code, reason: String(reason) }));
        for (const [id, p] of this.pending) {
          p.answer.error = { code, reason: String(reason) };
          this.finish(id);
        }
      });
      this.ws.on("error", () => undefined);
    });
    this.ready.catch(() => undefined);
  }

  send(text: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  arm(id: string, p: Pending): void {
    clearTimeout(p.timer);
    p.timer = setTimeout(() => {
      p.answer.open = true;
      this.send(JSON.stringify({ id, type: "complete" }));
      this.finish(id);
    }, p.idleMs);
  }

  finish(id: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    p.done();
  }

  close(): void {
    this.ws.terminate();
  }
}

export class RawWsSessions {
  private readonly sockets = new Map<string, Socket>();
  private nextId = 0;
  constructor(private readonly url: string) {}

  /**
   * Sends `{"id", "type": "subscribe", "payload": <payloadJson>}` and collects what comes back
   * for it; an operation with no message for `idleMs` is completed by us and marked open; with
   * `firstOnly`, so is one that sent its first result.
   */
  async run(key: string, authorization: string | undefined, payloadJson: string, idleMs: number, firstOnly = false): Promise<WsAnswer> {
    let socket = this.sockets.get(key);
    if (!socket || socket.closed) {
      socket = new Socket(this.url, authorization);
      this.sockets.set(key, socket);
    }
    const answer: WsAnswer = { nexts: [], completed: false, open: false };
    try {
      await socket.ready;
    } catch (err) {
      const e = err as { code?: number; reason?: string };
      answer.error = { code: e.code, reason: e.reason };
      return answer;
    }
    const id = String(++this.nextId);
    const s = socket;
    return new Promise((resolve) => {
      const p: Pending = { answer, idleMs, firstOnly, done: () => resolve(answer) };
      s.pending.set(id, p);
      s.arm(id, p);
      s.send(`{"id":"${id}","type":"subscribe","payload":${payloadJson}}`);
      if (s.closed) {
        answer.error = { code: 1006, reason: "closed before the message was sent" };
        s.finish(id);
      }
    });
  }

  close(): void {
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}
