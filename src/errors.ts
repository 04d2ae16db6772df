/** Reason codes and the HTTP status each maps to (DESIGN §3). */
export const reasonStatus = {
  illegalArguments: 400,
  notAuthenticated: 401,
  accessDenied: 403,
  notFound: 404,
  conflict: 409,
  preconditionFailed: 412,
  tooLarge: 413,
  rangeNotSatisfiable: 416,
  unsupportedMediaType: 415,
  tooManyRequests: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ReasonCode = keyof typeof reasonStatus;

/**
 * Whether a status says the client asked for what cannot be done: a 4xx, or a 501 (a method or
 * transfer coding nobody implements) or 505 (an HTTP version not spoken) — not a fault of the service.
 */
export const isClientStatus = (status: number) => (status >= 400 && status < 500) || status === 501 || status === 505;

/**
 * The reason code an HTTP status stands for, for errors raised with a status only (a router's 405 or
 * 501, Koa's body parsing, what yoga refuses): the reason of that status, `illegalArguments` for another
 * the client caused (`isClientStatus`), else `internal`.
 */
export function reasonOfStatus(status: number): ReasonCode {
  const reason = (Object.keys(reasonStatus) as ReasonCode[]).find((code) => reasonStatus[code] === status);
  return reason ?? (isClientStatus(status) ? 'illegalArguments' : 'internal');
}

/** The longest message an error carries. */
const maxMessageLength = 2_000;

/**
 * The one error type of the domain: a reason code, its HTTP status and optional details. It knows
 * nothing of GraphQL; the GraphQL layer (src/graphql/errors.ts) turns it into a GraphQL error whose
 * extensions carry the same three, which is how REST clients get them back.
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly status: number;

  constructor(
    readonly reasonCode: ReasonCode,
    message: string,
    readonly details?: string,
    /** seconds a refused client should wait (429, 503): the `Retry-After` header of HTTP answers */
    readonly retryAfter?: number,
  ) {
    // a message quotes what the client sent (an id, a name): a huge one is not sent back whole
    super(message.length > maxMessageLength ? `${message.slice(0, maxMessageLength)}… (message cut at ${maxMessageLength} characters)` : message);
    this.status = reasonStatus[reasonCode];
  }
}

export const illegalArguments = (message: string, details?: string) => new ServiceError('illegalArguments', message, details);
export const notFound = (message: string) => new ServiceError('notFound', message);
export const conflict = (message: string) => new ServiceError('conflict', message);
export const accessDenied = (message: string) => new ServiceError('accessDenied', message);
export const notAuthenticated = (message = 'a valid session is required') => new ServiceError('notAuthenticated', message);

/** The REST error body (DESIGN §3). */
export interface ErrorBody {
  _type: 'svc.model.error.ErrorResponse';
  status: number;
  reasonCode: string;
  message: string;
  details?: string;
}

export function errorBody(status: number, reasonCode: string, message: string, details?: string): ErrorBody {
  return { _type: 'svc.model.error.ErrorResponse', status, reasonCode, message, ...(details ? { details } : {}) };
}

/** Postgres foreign-key violations: a row referred to was deleted meanwhile. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; name?: string; cause?: { code?: string } };
  return e?.code === '23503' || e?.cause?.code === '23503' || e?.name === 'ForeignKeyConstraintViolationException';
}

/** Postgres unique violations become 409s at the edges that expect them. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; name?: string; cause?: { code?: string } };
  return e?.code === '23505' || e?.cause?.code === '23505' || e?.name === 'UniqueConstraintViolationException';
}

/** Postgres refused a value itself (SQLSTATE class 22, data exception: bad encoding, out of range…; 54000, a value over a limit such as a tsvector's 1 MB): another try would fail too. */
export function isRefusedValue(error: unknown): boolean {
  const e = error as { code?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code ?? '';
  return code.startsWith('22') || code === '54000';
}

/** Postgres cancelled a statement that ran past its statement_timeout (SQLSTATE 57014, with that reason). */
export function isStatementTimeout(error: unknown): boolean {
  const e = error as { code?: string; message?: string; cause?: { code?: string } };
  return (e?.code ?? e?.cause?.code) === '57014' && /statement timeout/.test(e?.message ?? '');
}

/**
 * Postgres gave up on a transaction because of concurrent ones (deadlock detected, serialisation
 * failure): running it again may succeed.
 */
export function isTransientConflict(error: unknown): boolean {
  const e = error as { code?: string; name?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.cause?.code;
  return code === '40P01' || code === '40001' || e?.name === 'DeadlockException';
}
