import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths.js';

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** resolves with the exit code (or signal) */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** Starts `node dist/src/main.js` as a user would, and waits until it answers /readyz. */
export async function startServiceProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/src/main.js')], {
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const baseUrl = `http://127.0.0.1:${env.PORT}${env.BASE_PATH ?? ''}`;
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited early (${child.exitCode}):\n${text}`);
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`service not ready in ${timeoutMs} ms:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, baseUrl, output: () => text, exited };
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as import('node:net').AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
