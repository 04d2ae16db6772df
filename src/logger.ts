import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * An error as logged: pino's standard fields, without the `client` that node-postgres attaches to the
 * error of a pooled connection (the whole connection, its cancel key among it).
 */
function serializeError(error: Error): Record<string, unknown> {
  const { client: _client, ...serialized } = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  return serialized;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'content-repository' }, timestamp: pino.stdTimeFunctions.isoTime, serializers: { err: serializeError } };
  return destination ? pino(options, destination) : pino(options);
}
