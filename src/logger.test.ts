import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('the logger', () => {
  it("logs an error's message, code and stack, never the database connection node-postgres attaches to it", () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const error = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', client: { processID: 7, secretKey: 42 } });
    logger.warn({ err: error }, 'connection failed');
    const logged = JSON.parse(lines[0]!);
    expect(logged).toMatchObject({ msg: 'connection failed', err: { message: error.message, code: '57P01', type: 'Error' } });
    expect(logged.err.stack).toContain('terminating connection');
    expect(lines[0]).not.toContain('secretKey');
  });
});
