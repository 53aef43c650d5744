// A real nats-server for tests: listens on 127.0.0.1 (a free port unless one is
// given, e.g. to restart a server where clients reconnect) and is killed by PID.
import { spawn } from 'node:child_process';
import { announcedAddress, portOf } from '../../internal/launcher/announce.js';

export interface RunningNats {
  url: string;
  port: number;
  pid: number;
  /** Kills the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, as a crash, and waits for it to exit. */
  crash(): Promise<void>;
}

const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

export async function startNats(options: { port?: number } = {}): Promise<RunningNats> {
  // Port -1 lets nats-server pick a free port, which it then logs.
  const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(options.port ?? -1)], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`nats-server did not start within ${START_TIMEOUT_MS} ms:\n${log}`)), START_TIMEOUT_MS);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const onExit = (code: number | null): void => fail(new Error(`nats-server exited with ${code}:\n${log}`));
    const onData = (chunk: string): void => {
      log += chunk;
      // Whole lines only, read as the launcher reads them.
      const listening = log.split('\n').slice(0, -1).map(announcedAddress).find((a) => a !== undefined);
      if (!listening) return;
      clearTimeout(timer);
      child.off('exit', onExit).off('error', fail);
      child.stderr.off('data', onData).resume();
      resolve(portOf(listening));
    };
    child.once('error', fail).once('exit', onExit);
    child.stderr.setEncoding('utf8').on('data', onData);
  });
  const pid = child.pid!;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => process.kill(pid, 'SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
    crash: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(pid, 'SIGKILL');
      await exited;
    },
  };
}
