import { expect } from 'chai';
import http, { type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { writeEvents } from '../../gateway/watchwriter.js';

const parts = [Buffer.from('{"type":"ADDED"}\n'), Buffer.from('{"type":"MODIFIED"}\n')];
const joined = Buffer.concat(parts).toString();

/** A server whose every response writes `parts` through writeEvents, recording what reached its connection. */
async function serve(onSocketWrite: (data: unknown) => void): Promise<{ port: number; close(): void }> {
  const server = http.createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    const socket = res.socket!;
    const write = socket.write.bind(socket) as (data: unknown) => boolean;
    socket.write = ((data: unknown, ...rest: unknown[]) => { onSocketWrite(data); return (write as (...a: unknown[]) => boolean)(data, ...rest); }) as typeof socket.write;
    writeEvents(res, parts);
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

/** Sends a raw request and reads the whole answer (the server closes after an HTTP/1.0 one). */
async function raw(port: number, request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.end(request);
  let text = '';
  socket.on('data', (d: Buffer) => { text += d.toString('latin1'); });
  await once(socket, 'close');
  return text;
}

describe('gateway watch writer', () => {
  it('writes the events as one HTTP/1.1 chunk, one buffer shared by responses given the same events', async () => {
    const writes: unknown[] = [];
    const server = await serve((data) => writes.push(data));
    try {
      const first = await raw(server.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const second = await raw(server.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const chunk = `${Buffer.byteLength(joined).toString(16)}\r\n${joined}\r\n`;
      for (const answer of [first, second]) {
        expect(answer).to.match(/^HTTP\/1\.1 200/);
        expect(answer).to.match(/transfer-encoding: chunked/i);
        expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).to.equal(`${chunk}0\r\n\r\n`);
      }
      const chunks = writes.filter((w) => Buffer.isBuffer(w) && w.toString() === chunk);
      expect(chunks).to.have.length(2);
      expect(chunks[0]).to.equal(chunks[1]);
    } finally {
      server.close();
    }
  });

  it('writes the events unframed through the response when it is not chunked (an HTTP/1.0 client)', async () => {
    const server = await serve(() => undefined);
    try {
      const answer = await raw(server.port, 'GET / HTTP/1.0\r\n\r\n');
      expect(answer).to.match(/^HTTP\/1\.1 200/);
      expect(answer).to.not.match(/transfer-encoding/i);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).to.equal(joined);
    } finally {
      server.close();
    }
  });
});
