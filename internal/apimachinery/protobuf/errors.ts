// Failures of the Protobuf codec. Malformed input is the client's fault, so the
// error is a 400 Status the gateway can answer as is.
import { StatusError } from '../status.js';

export class ProtobufError extends StatusError {
  constructor(message: string) {
    super(400, 'BadRequest', `protobuf: ${message}`);
  }
}
