/**
 * The part of EventStoreDB's client (@eventstore/db-client 6.2.1) the adapter uses, as an interface,
 * so that tests can hand the adapter a stand-in (test/support/esdb-standin/) and production the real
 * client. One addition: reads of $all take a server-side filter, as the server's gRPC Read call does
 * (the client only offers it on subscriptions; esdb-filtered-read.ts sends it on reads).
 */
import {
  EventStoreDBClient,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendResult,
  type AppendToStreamOptions,
  type DeleteResult,
  type DeleteStreamOptions,
  type Filter,
  type SetStreamMetadataOptions,
  type StreamMetadata,
  type JSONEventData,
  type ReadAllOptions,
  type ReadStreamOptions,
  type ResolvedEvent,
  type StreamingRead,
  type SubscribeToAllOptions,
} from "@eventstore/db-client";
import { filteredReadAll } from "./esdb-filtered-read.js";

export interface EsdbReadAllOptions extends ReadAllOptions {
  /** Server-side: only the events that pass it are sent, and maxCount counts those. */
  filter?: Filter;
}

export interface EsdbClient {
  appendToStream(streamName: string, events: JSONEventData[], options?: AppendToStreamOptions): Promise<AppendResult>;
  readStream(streamName: string, options?: ReadStreamOptions): StreamingRead<ResolvedEvent>;
  readAll(options?: EsdbReadAllOptions): StreamingRead<AllStreamResolvedEvent>;
  subscribeToAll(options?: SubscribeToAllOptions): AllStreamSubscription;
  /** Soft delete: reads skip the stream at once, a scavenge reclaims it. */
  deleteStream(streamName: string, options?: DeleteStreamOptions): Promise<DeleteResult>;
  /** Retention only sets `truncateBefore` ($tb): reads start at that revision, a scavenge reclaims the events before it. */
  setStreamMetadata(streamName: string, metadata: StreamMetadata, options?: SetStreamMetadataOptions): Promise<AppendResult>;
  dispose(): Promise<void>;
}

/**
 * The real client for a connection string. A URL that sets `throwOnAppendFailure=false` is refused:
 * that client answers a refused append with `success: false` instead of an error, and the adapter
 * (which also treats `success: false` as a refusal) wants the refusal's details.
 */
export function connectClient(url: string): EsdbClient {
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  for (const part of query.split("&")) {
    const [key, value] = part.split("=");
    if (key?.toLowerCase() === "throwonappendfailure" && value?.toLowerCase() !== "true") {
      throw new Error(`EVENTSTORE_URL: throwOnAppendFailure=${value ?? ""} is not supported (leave it out: the service needs refused appends reported as errors)`);
    }
  }
  const client = EventStoreDBClient.connectionString(url);
  return {
    appendToStream: (stream, events, options) => client.appendToStream(stream, events, options),
    readStream: (stream, options) => client.readStream(stream, options),
    readAll: (options = {}) => {
      const { filter, ...rest } = options;
      return filter ? filteredReadAll(client, filter, rest) : client.readAll(rest);
    },
    subscribeToAll: (options) => client.subscribeToAll(options),
    deleteStream: (stream, options) => client.deleteStream(stream, options),
    setStreamMetadata: (stream, metadata, options) => client.setStreamMetadata(stream, metadata, options),
    dispose: () => client.dispose(),
  };
}
