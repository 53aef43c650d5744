// Releases of the expression environment. Every function and option records the
// release that introduced it, so a rule can be compiled for an older server.

/** The release this server serves. */
export const SERVING_RELEASE = '1.34';
/** Marks what has been available since the first release of the language. */
export const ALL_RELEASES = '1.0';
/** Quantity library, optional types and cross-type numeric comparisons. */
export const RELEASE_1_29 = '1.29';
/** IP and CIDR library. */
export const RELEASE_1_31 = '1.31';

function parts(release: string): [number, number] {
  const m = /^v?(\d+)\.(\d+)$/.exec(release.trim());
  if (!m) throw new Error(`invalid release "${release}", expected MAJOR.MINOR`);
  return [Number(m[1]), Number(m[2])];
}

/** Negative when a is older than b, zero when equal, positive when newer. */
export function compareReleases(a: string, b: string): number {
  const [am, an] = parts(a);
  const [bm, bn] = parts(b);
  return am - bm || an - bn;
}

/** Throws on a release that is not MAJOR.MINOR. */
export function checkRelease(release: string): string {
  parts(release);
  return release;
}
