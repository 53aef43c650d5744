// An `Expect` header other than 100-continue: the server cannot meet it, and says so
// with a Status (417), as with every other refusal, before the app sees the request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StatusError } from '../internal/apimachinery/status.js';

/** The `checkExpectation` listener of the HTTPS server. */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  const err = new StatusError(417, 'ExpectationFailed', 'the server cannot meet the Expect header of the request: only "100-continue" is supported');
  res.writeHead(err.code, { 'Content-Type': 'application/json', Connection: 'close' }).end(JSON.stringify(err.toStatus()));
  req.resume();
}
