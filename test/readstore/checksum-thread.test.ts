import { crc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ChecksumThread } from "../../src/infra/readstore/checksum-thread.js";

const shared = (n: number, seed: number): Buffer => {
  const b = Buffer.from(new SharedArrayBuffer(n));
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
};

describe("CRC-32s on a thread of their own", () => {
  it("equal zlib's for bytes in shared memory (parts of them too) and for bytes that are not", async () => {
    const thread = new ChecksumThread();
    try {
      const a = shared(3 << 20, 1);
      const b = shared(1000, 7);
      const plain = Buffer.from("not shared");
      const sums = await Promise.all([thread.crc32(a), thread.crc32(b), thread.crc32(a.subarray(10, 5000)), thread.crc32(plain)]);
      expect(sums).toEqual([crc32(a), crc32(b), crc32(a.subarray(10, 5000)), crc32(plain)]);
    } finally {
      await thread.close();
    }
  });

  it("are still computed once the thread is closed: on the caller's thread", async () => {
    const thread = new ChecksumThread();
    const bytes = shared(4096, 3);
    const during = thread.crc32(bytes);
    await thread.close();
    expect(await during).toBe(crc32(bytes));
    expect(await thread.crc32(bytes)).toBe(crc32(bytes));
  });
});
