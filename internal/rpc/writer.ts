// protobufjs writers sized up front. A Writer starts with 128 bytes and doubles as it
// fills, allocating and copying at each step, then copies the whole message out in
// finish(): at the sizes the services send (an object of a few KB, a batch of frames
// of tens of KB) that was most of the cost of encoding a message.
import protobuf from 'protobufjs/light.js';

/** Above this, a writer grows as protobufjs grows it: a size hint never allocates more up front. */
const MAX_CAPACITY = 1 << 20;

/** A writer whose buffer holds `capacity` bytes (at most MAX_CAPACITY) before it has to grow. */
export function sizedWriter(capacity: number): protobuf.Writer {
  const w = protobuf.Writer.create();
  if (capacity > w.buf.length) w.buf = Buffer.allocUnsafe(Math.min(capacity, MAX_CAPACITY));
  return w;
}

/** The bytes written: a view of the writer's buffer when they fill at least half of it (the writer is not used
 * again), else a copy, so that a small message does not keep a large buffer alive. */
export function finished(w: protobuf.Writer): Buffer {
  return (w.pos * 2 >= w.buf.length ? w.finish(true) : w.finish()) as Buffer;
}
