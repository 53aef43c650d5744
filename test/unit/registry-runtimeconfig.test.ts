import { expect } from 'chai';
import { builtinRegistry } from '../../internal/registry/index.js';
import { group } from '../../internal/names/index.js';

describe('--runtime-config', () => {
  it('serves the stable versions by default', () => {
    const r = builtinRegistry();
    expect(r.lookup('batch', 'v1', 'jobs')).to.not.equal(undefined);
    expect(r.lookup(group('storage'), 'v1beta1', 'volumeattributesclasses')).to.equal(undefined);
  });

  it('turns a group version off, and a non-stable one on', () => {
    const r = builtinRegistry({ runtimeConfig: `batch/v1=false,${group('storage')}/v1beta1` });
    expect(r.lookup('batch', 'v1', 'jobs')).to.equal(undefined);
    expect(r.groups().has('batch')).to.equal(false);
    expect(r.inGroupVersion(group('storage'), 'v1beta1').length).to.be.greaterThan(0);
  });

  it('switches single resources and whole stability levels, the most specific setting winning', () => {
    const r = builtinRegistry({ runtimeConfig: `api/beta=true,${group('networking')}/v1beta1=false,apps/v1/daemonsets=false` });
    expect(r.inGroupVersion(group('coordination'), 'v1beta1').length).to.be.greaterThan(0);
    expect(r.inGroupVersion(group('networking'), 'v1beta1')).to.deep.equal([]);
    expect(r.lookup('apps', 'v1', 'daemonsets')).to.equal(undefined);
    expect(r.lookup('apps', 'v1', 'deployments')).to.not.equal(undefined);
    expect(builtinRegistry({ runtimeConfig: 'api/all=false,v1=true' }).groups().size).to.equal(1);
  });

  it('refuses an unknown group version or a bad value', () => {
    expect(() => builtinRegistry({ runtimeConfig: 'nothing.example/v9=true' })).to.throw(/unknown api group version/);
    expect(() => builtinRegistry({ runtimeConfig: 'batch/v1=maybe' })).to.throw(/must be true or false/);
  });
});
