// The certificates group (v1): CertificateSigningRequest.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { invalid, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asList, asObj, clone, objects, str, specOf } from '../values.js';

const USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign', 'crl sign',
  'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime', 'ipsec end system',
  'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
];
const CONDITION_TYPES = ['Approved', 'Denied', 'Failed'];
const MIN_EXPIRATION_SECONDS = 600;
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;


function validateCSR(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  const request = str(spec.request);
  if (!request) causes.push(required('spec.request'));
  else if (!Buffer.from(request, 'base64').toString('utf8').includes('-----BEGIN CERTIFICATE REQUEST-----')) {
    causes.push(invalid('spec.request', '<request>', 'PEM block type must be CERTIFICATE REQUEST'));
  }
  const signer = str(spec.signerName);
  if (!signer) causes.push(required('spec.signerName'));
  else if (!SIGNER_NAME.test(signer)) causes.push(invalid('spec.signerName', signer, 'must be a fully qualified domain and path of the form \'example.com/signer-name\''));
  asList(spec.usages).forEach((u, i) => causes.push(...oneOf(`spec.usages[${i}]`, u, USAGES)));
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < MIN_EXPIRATION_SECONDS) {
    causes.push(invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  return causes;
}

function validateCSRStatus(obj: ApiObject): Causes {
  const conditions = objects(asObj(obj.status)?.conditions);
  const causes = conditions.flatMap((c, i) => [
    ...(typeof c.type === 'string' && c.type ? [] : [required(`status.conditions[${i}].type`)]),
    ...oneOf(`status.conditions[${i}].status`, c.status, ['True', 'False', 'Unknown']),
  ]);
  const types = conditions.filter((c) => CONDITION_TYPES.includes(c.type as string)).map((c) => c.type);
  if (types.includes('Approved') && types.includes('Denied')) causes.push(invalid('status.conditions', 'Approved', 'Approved and Denied conditions are mutually exclusive'));
  return causes;
}

function conditionText(o: ApiObject): string {
  const types = objects(asObj(o.status)?.conditions).filter((c) => c.status !== 'False').map((c) => String(c.type));
  const issued = asObj(o.status)?.certificate ? ['Issued'] : [];
  return [...types, ...issued].join(',') || 'Pending';
}

const certificatesigningrequests: KindSpec = {
  shortNames: ['csr'], tracksGeneration: false,
  selectableFields: { 'spec.signerName': (o) => str(specOf(o).signerName) ?? '' },
  /** The requestor is whoever created the request, never what the request claims. */
  create(obj, requester) {
    const spec = asObj(obj.spec);
    if (!spec) return;
    for (const f of ['username', 'uid', 'groups', 'extra']) delete spec[f];
    if (!requester) return;
    spec.username = requester.username;
    if (requester.uid) spec.uid = requester.uid;
    if (requester.groups?.length) spec.groups = [...requester.groups];
    const extra = Object.entries(requester.extra ?? {}).map(([k, v]) => [k, [...v.values]]);
    if (extra.length) spec.extra = Object.fromEntries(extra);
  },
  update(obj, old) {
    obj.spec = clone(old.spec);
  },
  validate: validateCSR,
  validateStatus: validateCSRStatus,
  tableColumns: [nameColumn, ageColumn,
    column('SignerName', 'string', 'The signer of the request.', (o) => specOf(o).signerName ?? ''),
    column('Requestor', 'string', 'The user that made the request.', (o) => specOf(o).username ?? ''),
    column('RequestedDuration', 'string', 'The requested validity of the certificate.', (o) => (typeof specOf(o).expirationSeconds === 'number' ? `${Math.round((specOf(o).expirationSeconds as number) / 60)}m` : '<none>')),
    column('Condition', 'string', 'The state of the request.', conditionText)],
};

export const certificatesKinds: Record<string, KindSpec> = { certificatesigningrequests };
