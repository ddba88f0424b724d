/**
 * graphql-ws's server on a `ws` WebSocketServer, as graphql-ws/use/ws does it, with our logger:
 * a client that drops mid-subscription (a reset connection, a send to a closed socket) is a
 * debug line, not an error with a stack on stderr; anything else the protocol handler throws is
 * logged once, and the socket is closed with 4500 and no internal text.
 */
import type { IncomingMessage } from "node:http";
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from "graphql-ws";
import type { WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../infra/logger.js";

export interface WsExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
}

/** Ping every `keepAliveMs`; a socket that does not answer within the next interval is dropped. */
const KEEP_ALIVE_MS = 12_000;

export function serveGraphqlWs<P extends Record<string, unknown> | undefined, E extends Record<PropertyKey, unknown>>(
  options: ServerOptions<P, WsExtra & Partial<E>>,
  wss: WebSocketServer,
  log: Logger,
): { dispose(): Promise<void> } {
  const server = makeServer(options);
  wss.options.handleProtocols = handleProtocols;
  wss.on("error", (err) => log.error({ err }, "the WebSocket server failed"));
  wss.on("connection", (socket, request) => {
    const dropped = (err: unknown, what: string) => {
      if (socket.readyState !== socket.OPEN || clientGone(err)) return void log.debug({ err: String(err) }, `a WebSocket client went away: ${what}`);
      log.warn({ err: String(err) }, `WebSocket ${what} failed; closing the connection`);
      socket.close(CloseCode.InternalServerError, "Internal server error");
    };
    socket.on("error", (err) => dropped(err, "connection"));
    const keepAlive = pinging(socket);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            // A send that fails means the client is gone: the subscription ends with the socket.
            socket.send(data, (err) => {
              if (err) dropped(err, "send");
              resolve();
            });
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) => socket.on("message", (data) => void cb(String(data)).catch((err) => dropped(err, "message handling"))),
      },
      { socket, request } as WsExtra & Partial<E>,
    );
    socket.once("close", (code, reason) => {
      clearInterval(keepAlive);
      void closed(code, String(reason));
    });
  });
  return {
    async dispose() {
      for (const client of wss.clients) client.close(1001, "Going away");
      wss.removeAllListeners();
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/** The errors of a connection the other end closed or reset. */
const GONE = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ETIMEDOUT", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END"]);
const clientGone = (err: unknown) => GONE.has(String((err as { code?: unknown } | null)?.code));

function pinging(socket: WebSocket): NodeJS.Timeout {
  let answered = true;
  socket.on("pong", () => (answered = true));
  return setInterval(() => {
    if (socket.readyState !== socket.OPEN) return;
    if (!answered) return void socket.terminate();
    answered = false;
    socket.ping();
  }, KEEP_ALIVE_MS);
}
