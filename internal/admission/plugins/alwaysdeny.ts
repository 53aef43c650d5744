// AlwaysDeny: refuses every write and connection (for tests of admission
// itself; never for a real cluster).
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';

export const ALWAYS_DENY = 'AlwaysDeny';

export class AlwaysDeny implements AdmissionPlugin {
  readonly name = ALWAYS_DENY;
  readonly phase = 'mutating' as const;

  handles(_operation: Operation): boolean {
    return true;
  }

  async admit(request: AdmissionRequest): Promise<void> {
    throw forbiddenRequest(request, 'admission control is denying all modifications');
  }
}
