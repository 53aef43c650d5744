// JSON documents from an identity provider over HTTPS, verified against the
// configured CAs or the system roots; bounded in time and size.
import https from 'node:https';

const TIMEOUT_MS = 10_000;
const MAX_BYTES = 1 << 20;

/** GETs a JSON document; rejects on a non-2xx answer, a timeout or bad JSON. */
export function getJson(url: string, ca: string | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ...(ca ? { ca } : {}), timeout: TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) req.destroy(new Error(`${url}: answer larger than ${MAX_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) > 299) return reject(new Error(`${url}: ${res.statusCode} ${text.slice(0, 200)}`));
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(new Error(`${url}: ${(err as Error).message}`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${TIMEOUT_MS / 1000}s`)));
    req.on('error', reject);
  });
}
