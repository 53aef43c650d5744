// A large list's body, copied from its parts (head, items, tail) into pieces as it is written.
// Written straight to the response (the usual case), each piece goes out as one write of one
// buffer once the piece before it is written: TLS encrypts a lone buffer in place, where
// several written together are first copied into a buffer it allocates. A written piece is
// kept for the next one and for later lists, so a list allocates nothing for its bytes: lists
// of fresh buffers were freed together by the collector, their memory given back to the system
// and faulted in again by the next list, which cost more than the copies. When something else
// reads the body (gzip), it gets new pieces through the stream.
import { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';

const PIECE_BYTES = 128 * 1024;
/** Written pieces kept for later lists: enough for a few lists written at once. */
const KEPT_PIECES = 16;
const kept: Buffer[] = [];

export class ListBody extends Readable {
  private part = 0;
  private offset = 0;
  private started = false;

  /** `direct` is the response when the body is written straight to it. */
  constructor(private readonly parts: Uint8Array[], readonly byteLength: number, private readonly direct: () => ServerResponse | undefined) {
    super();
  }

  override _read(): void {
    const res = this.direct();
    if (!res) {
      const piece = Buffer.allocUnsafe(Math.min(PIECE_BYTES, this.byteLength));
      this.push(piece.subarray(0, this.fill(piece)));
      if (this.part === this.parts.length) this.push(null);
    } else if (!this.started) {
      this.started = true;
      this.writeTo(res);
    }
  }

  /** Writes the next piece, and the one after it once it is written; ends the body after the last. */
  private writeTo(res: ServerResponse): void {
    if (this.destroyed) return;
    if (this.part === this.parts.length) {
      this.push(null);
      return;
    }
    const piece = kept.pop() ?? Buffer.allocUnsafeSlow(PIECE_BYTES);
    const n = this.fill(piece);
    res.write(n === piece.length ? piece : piece.subarray(0, n), (err) => {
      // A failed write leaves the piece to the collector: the connection may still hold it.
      if (err) return;
      if (kept.length < KEPT_PIECES) kept.push(piece);
      this.writeTo(res);
    });
  }

  /** Copies the next bytes of the parts into `piece`; how many. */
  private fill(piece: Buffer): number {
    let pos = 0;
    while (pos < piece.length && this.part < this.parts.length) {
      const p = this.parts[this.part];
      const n = Math.min(p.length - this.offset, piece.length - pos);
      piece.set(this.offset === 0 && n === p.length ? p : p.subarray(this.offset, this.offset + n), pos);
      pos += n;
      this.offset += n;
      if (this.offset === p.length) {
        this.part++;
        this.offset = 0;
      }
    }
    return pos;
  }
}
