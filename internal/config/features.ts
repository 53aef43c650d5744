// Feature gates (`--feature-gates=Name=true,...`): each gate with its stage and
// default as in release 1.34. Unknown gates are refused at start.

export type Stage = 'ALPHA' | 'BETA' | 'GA';
interface Gate { stage: Stage; default: boolean }

export const FEATURE_GATES: Record<string, Gate> = {
  APIResponseCompression: { stage: 'BETA', default: true },
  CBORServingAndStorage: { stage: 'ALPHA', default: false },
  AllowUnsafeMalformedObjectDeletion: { stage: 'ALPHA', default: false },
  ListFromCacheSnapshot: { stage: 'BETA', default: true },
  WatchList: { stage: 'BETA', default: true },
  DeclarativeValidation: { stage: 'BETA', default: true },
  DeclarativeValidationTakeover: { stage: 'BETA', default: false },
  MutatingAdmissionPolicy: { stage: 'BETA', default: false },
};

export type FeatureGates = (name: keyof typeof FEATURE_GATES) => boolean;

/** Parses `A=true,B=false`; an unknown gate or a value other than true/false throws. */
export function parseFeatureGates(text: string): FeatureGates {
  const set = new Map<string, boolean>();
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, value] = item.split('=');
    if (!FEATURE_GATES[name]) throw new Error(`unrecognized feature gate: ${name}`);
    if (value !== 'true' && value !== 'false') throw new Error(`invalid value of ${name}: ${value}, err: must be true or false`);
    set.set(name, value === 'true');
  }
  return (name) => set.get(name) ?? FEATURE_GATES[name].default;
}
