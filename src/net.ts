import net from 'node:net';

/**
 * A TCP port on loopback that nothing listens on right now, other than those in `reserved` (ports
 * promised to a listener that has not started yet, such as the service's own PORT).
 */
export async function freePort(reserved: readonly number[] = []): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (!reserved.includes(port)) return port;
  }
}

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
