// AlwaysAdmit: admits every request (upstream keeps it, deprecated, for
// clusters that name it; it changes nothing).
import type { AdmissionPlugin, Operation } from '../types.js';

export const ALWAYS_ADMIT = 'AlwaysAdmit';

export class AlwaysAdmit implements AdmissionPlugin {
  readonly name = ALWAYS_ADMIT;
  readonly phase = 'mutating' as const;

  handles(_operation: Operation): boolean {
    return true;
  }

  async admit(): Promise<void> {}
}
