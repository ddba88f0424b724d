/** Reporting a request's outcome to the service: retried until the service takes it (it may be restarting). */
import pRetry, { AbortError } from "p-retry";
import type { Logger } from "../../infra/logger.js";
import { GraphQLRequestError, postGraphQL, type GraphQLClientOptions } from "./graphql-client.js";

/** Sends `mutation` with `{ input }`; a report the service refuses for good (NOT_FOUND, CONFLICT) is dropped, and logged. */
export async function reportUntilTaken(opts: { client: GraphQLClientOptions; log: Logger }, what: string, mutation: string, input: { requestId: string } & Record<string, unknown>): Promise<void> {
  try {
    await pRetry(
      async () => {
        try {
          return await postGraphQL(opts.client, mutation, { input });
        } catch (err) {
          if (err instanceof GraphQLRequestError && (err.code === "NOT_FOUND" || err.code === "CONFLICT")) throw new AbortError(err);
          throw err;
        }
      },
      {
        retries: 30,
        minTimeout: 250,
        maxTimeout: 5000,
        onFailedAttempt: ({ error, retriesLeft }) => opts.log.warn({ error: error.message, retriesLeft }, `${what} report not taken; retrying`),
      },
    );
  } catch (err) {
    opts.log.error({ err: (err as Error).message, request: input.requestId }, `the service did not take the ${what} report`);
  }
}
