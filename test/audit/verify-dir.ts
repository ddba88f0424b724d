/** audit verify over an embedded log's directory, opened for the walk and closed after (the tests change the files between walks). */
import { verifyLog, type VerifyOptions, type VerifyReport } from "../../src/audit/verify.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";

export async function verifyDir(dir: string, options: VerifyOptions): Promise<VerifyReport> {
  const store = await LmdbEventStore.open(dir);
  try {
    return await verifyLog(store, options);
  } finally {
    await store.close();
  }
}
