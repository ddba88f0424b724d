/**
 * The script that applies a batch, and the command that sends it.
 *
 * One script applies a whole batch and moves the checkpoint: atomic (nothing runs between its
 * commands), and fast (one round trip for a thousand events). Every key it touches is in KEYS
 * (KEYS[1] is the projection's meta key) and shares the projection's hash tag, so it runs on
 * Redis Cluster too. ARGV[1]: the expected checkpoint ('*' any, '-' none, or 20 digits);
 * ARGV[2]: the new one (the stored one only when ARGV[1] names it: writes that move no checkpoint); ARGV[3] and ARGV[4]: the origin's log and event, kept beside the
 * checkpoint ('' and '': none; a model stamped with another log refuses the batch);
 * ARGV[5]: the ops, combined per key by redis-batch.ts, as one MessagePack
 * array (redis-ops.ts; one argument decoded in C costs a fraction of thousands of arguments):
 * 1 k (DEL), 2 k n f v.. (HSET), 3 k n f.. (HDEL), 4 k n s m.. (ZADD), 5 k n s m.. (ZADD NX),
 * 6 k n m.. (ZREM); k indexes KEYS, scores are strings.
 * Positions are compared as zero-padded strings, never with tonumber (doubles lose them past 2^53).
 */
import { createHash } from "node:crypto";
import { Command } from "ioredis";

export const APPLY_LUA = `
local stored = redis.call('HMGET', KEYS[1], 'checkpoint', 'log')
local cur = stored[1]
local expected = ARGV[1]
local cp = ARGV[2]
local log = ARGV[3]
if expected ~= '*' then
  if (expected == '-' and cur) or (expected ~= '-' and cur ~= expected) then
    return redis.error_reply('CHECKPOINT_MISMATCH ' .. (cur or '-'))
  end
end
if cur and (cp < cur or (cp == cur and expected ~= cur)) then return redis.error_reply('CHECKPOINT_MISMATCH ' .. cur) end
if log ~= '' and stored[2] and stored[2] ~= log then return redis.error_reply('CHECKPOINT_MISMATCH ' .. (cur or '-')) end
local a = cmsgpack.unpack(ARGV[5])
local call = redis.call
local i = 1
local n = #a
while i <= n do
  local op = a[i]
  local key = KEYS[a[i + 1]]
  if op == 1 then
    call('DEL', key)
    i = i + 2
  else
    local c = a[i + 2]
    if op == 2 then
      call('HSET', key, unpack(a, i + 3, i + 2 + 2 * c))
      i = i + 3 + 2 * c
    elseif op == 4 then
      call('ZADD', key, unpack(a, i + 3, i + 2 + 2 * c))
      i = i + 3 + 2 * c
    elseif op == 5 then
      call('ZADD', key, 'NX', unpack(a, i + 3, i + 2 + 2 * c))
      i = i + 3 + 2 * c
    elseif op == 6 then
      call('ZREM', key, unpack(a, i + 3, i + 2 + c))
      i = i + 3 + c
    elseif op == 3 then
      call('HDEL', key, unpack(a, i + 3, i + 2 + c))
      i = i + 3 + c
    else
      return redis.error_reply('BAD_OP ' .. tostring(op))
    end
  end
end
if log == '' then
  call('HSET', KEYS[1], 'checkpoint', cp)
  call('HDEL', KEYS[1], 'log', 'event')
else
  call('HSET', KEYS[1], 'checkpoint', cp, 'log', log, 'event', ARGV[4])
end
return 1
`;

const SHA = createHash("sha1").update(APPLY_LUA).digest("hex");
const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
const EVALSHA = bulk("evalsha") + bulk(SHA);
const EVAL = bulk("eval") + bulk(APPLY_LUA);
/** Room before the arguments for `*<count>` and EVALSHA <sha>, written in place when sent. */
export const HEADROOM = 16 + EVALSHA.length;
/** Connections that have run the script once (then EVALSHA finds it), as ioredis's own scripts do. */
const loaded = new WeakSet<object>();

/**
 * EVALSHA of the apply script, encoded by redis-ops.ts in one buffer: ioredis would flatten,
 * measure and copy thousands of KEYS one by one. The first call on a connection sends the script
 * itself (EVAL), so it is loaded there; NOSCRIPT (after a SCRIPT FLUSH) is answered by resending.
 * The buffer holds the arguments from HEADROOM to `end`; it must stay as it is until the command
 * settles (ioredis may write it again after a reconnection).
 */
export class ApplyCommand extends Command {
  private resend = false;

  constructor(
    private readonly argc: number,
    private readonly buf: Buffer,
    private readonly end: number,
    /** The projection's meta key as Redis names it: on a cluster, the command goes to its slot's master. */
    private readonly meta: string,
  ) {
    super("evalsha", []);
  }

  override getKeys(): Array<string | Buffer> {
    return [this.meta];
  }

  override toWritable(socket: object): Buffer {
    const count = `*${this.argc + 2}\r\n`;
    if (this.resend || !loaded.has(socket)) {
      loaded.add(socket);
      return Buffer.concat([Buffer.from(count + EVAL, "latin1"), this.buf.subarray(HEADROOM, this.end)]);
    }
    const head = count + EVALSHA;
    const start = HEADROOM - head.length;
    this.buf.write(head, start, "latin1");
    return this.buf.subarray(start, this.end);
  }

  /** A new command with the same arguments, after NOSCRIPT: it sends the script itself, on whichever connection it goes. */
  retry(): ApplyCommand {
    const again = new ApplyCommand(this.argc, this.buf, this.end, this.meta);
    again.resend = true;
    return again;
  }
}

/**
 * Buffers for commands, reused once their command settled: a fresh megabyte per batch is memory
 * outside V8's heap that it counts, and it answers with full garbage collections of the whole heap.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(1 << 16);
  }

  give(buf: Buffer): void {
    // Four per projection at most (three batches in flight, and a spare); huge ones are not kept.
    if (this.free.length < 32 && buf.length <= 64 << 20) this.free.push(buf);
  }
}
