import { expect } from 'chai';
import http, { type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { pipeline } from 'node:stream';
import { createGzip, gunzipSync } from 'node:zlib';
import { ListBody } from '../../gateway/listbody.js';

const PIECE = 128 * 1024;

/** Parts of awkward sizes: empty ones, ones larger than a piece, ones that straddle pieces. */
function parts(): Buffer[] {
  const sizes = [17, 0, 300_000, 1, PIECE - 18, 5, 0, 70_000, PIECE, 3];
  return sizes.map((n, i) => Buffer.alloc(n, i + 1));
}

/** Serves `parts` as a ListBody, straight to the response or through gzip; records the response's writes. */
async function serve(gzip: boolean): Promise<{ port: number; writes: number[]; close(): void }> {
  const writes: number[] = [];
  const server = http.createServer((_req, res: ServerResponse) => {
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    res.write = ((chunk: Buffer, ...rest: unknown[]) => { writes.push(chunk.length); return write(chunk, ...rest); }) as typeof res.write;
    const all = parts();
    const size = all.reduce((n, p) => n + p.length, 0);
    const body: ListBody = new ListBody(all, size, () => (gzip ? undefined : res));
    if (gzip) pipeline(body, createGzip(), res, () => {});
    else {
      res.setHeader('Content-Length', size);
      pipeline(body, res, () => {});
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, writes, close: () => server.close() };
}

async function fetchBody(port: number): Promise<{ body: Buffer; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ body: Buffer.concat(chunks), headers: res.headers }));
    }).on('error', reject);
  });
}

describe('a large list\'s body', () => {
  const whole = Buffer.concat(parts());

  it('written straight to the response: the parts\' bytes in order, one write per piece of at most 128 KiB', async () => {
    const s = await serve(false);
    try {
      for (let round = 0; round < 2; round++) { // the second reuses the pieces the first wrote
        s.writes.length = 0;
        const { body, headers } = await fetchBody(s.port);
        expect(body.equals(whole)).to.equal(true);
        expect(headers['content-length']).to.equal(String(whole.length));
        expect(s.writes.length).to.equal(Math.ceil(whole.length / PIECE));
        expect(s.writes.every((n) => n <= PIECE)).to.equal(true);
      }
    } finally {
      s.close();
    }
  });

  it('read by another stream (gzip): the same bytes, through new pieces', async () => {
    const s = await serve(true);
    try {
      const { body } = await fetchBody(s.port);
      expect(gunzipSync(body).equals(whole)).to.equal(true);
    } finally {
      s.close();
    }
  });
});
