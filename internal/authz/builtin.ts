// The authorizers that need no configuration; their answers hold as long as the
// process runs.
import { GROUP_MASTERS } from '../names/index.js';
import { verdict, type Attributes, type Authorizer, type Verdict } from './types.js';

export class AlwaysAllowAuthorizer implements Authorizer {
  async authorize(): Promise<Verdict> {
    return verdict('ALLOW', '', undefined, 'process');
  }
}

/** Refuses by having no opinion, as Kubernetes does: an authorizer later in the
 * chain may still allow, and a chain where none does denies. */
export class AlwaysDenyAuthorizer implements Authorizer {
  async authorize(): Promise<Verdict> {
    return verdict('NO_OPINION', 'Everything is forbidden.', undefined, 'process');
  }
}

/** Allows members of the given groups everything; stands in front of the chain. */
export class PrivilegedGroupAuthorizer implements Authorizer {
  constructor(private readonly groups: string[] = [GROUP_MASTERS]) {}

  async authorize(attributes: Attributes): Promise<Verdict> {
    const member = attributes.user.groups.some((g) => this.groups.includes(g));
    return verdict(member ? 'ALLOW' : 'NO_OPINION', '', undefined, 'process');
  }
}
