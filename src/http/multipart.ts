import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Context } from 'koa';
import { illegalArguments, ServiceError } from '../errors.js';

export interface MultipartResult<T> {
  fields: Record<string, string[]>;
  /** what `onFile` made of the part named `file`, when there was one */
  file?: T;
}

/** What becomes of the part named `file`: `receive` reads it as it arrives; `discard` drops what it made when the request fails after all. */
export interface FilePartHandler<T> {
  receive(stream: Readable, info: { fileName: string; mimeType: string }, fieldsSoFar: Record<string, string[]>): Promise<T>;
  discard(received: T): Promise<void>;
}

/**
 * Reads a multipart/form-data request as a stream: text fields are collected (1 MiB at most), the one
 * part named `file` goes to `onFile` as it arrives (never buffered). Any other file part is a 400, and
 * a request refused after its file was received (a second file part, a cut body) discards that file.
 */
export async function readMultipart<T>(ctx: Context, onFile: FilePartHandler<T>): Promise<MultipartResult<T>> {
  if (!ctx.request.is('multipart/form-data')) {
    throw new ServiceError('unsupportedMediaType', `expected multipart/form-data, got '${ctx.request.type || 'no content type'}'`);
  }
  const fields: Record<string, string[]> = {};
  let file: Promise<T> | undefined;
  let stop: (error: unknown) => void = () => undefined;
  let failure: Error | undefined;
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: ctx.req.headers,
      limits: { fields: 200, fieldSize: 1024 * 1024, files: 1, parts: 210 },
      defParamCharset: 'utf8',
    });
  } catch (error) {
    // for example a Content-Type without a boundary
    throw illegalArguments(`malformed multipart request: ${(error as Error).message}`);
  }
  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) failure ??= illegalArguments(`field '${name}' is longer than 1 MiB`);
    (fields[name] ??= []).push(value);
  });
  parser.on('file', (name, stream, info) => {
    if (name !== 'file' || file) {
      failure ??= illegalArguments(`unexpected file part '${name}': send the file in one part named 'file'`);
      stream.resume();
      return;
    }
    // a cut body errors the part stream again after its consumer let go; the parser reports it already
    stream.on('error', () => undefined);
    file = onFile.receive(stream, { fileName: info.filename ?? '', mimeType: info.mimeType }, fields);
    // a failed file (too large, disk full) ends the request at once, not after the rest has arrived
    file.catch((error: unknown) => stop(error));
  });
  parser.on('filesLimit', () => (failure ??= illegalArguments('only one file part is accepted')));
  parser.on('fieldsLimit', () => (failure ??= illegalArguments('too many form fields')));
  const finished = new Promise<void>((resolve, reject) => {
    stop = reject;
    parser.once('close', resolve);
    // `on`, not `once`: busboy may emit several errors for one broken body, and an unheard one would crash the process
    parser.on('error', (error: Error) => reject(illegalArguments(`malformed multipart body: ${error.message}`)));
    ctx.req.once('close', () => {
      if (!ctx.req.complete) reject(illegalArguments('the client went away during the upload'));
    });
  });
  /** The file, when it was received whole before the request failed: dropped. */
  const discardReceived = async () => {
    const received = await file?.then((value) => ({ value }), () => undefined);
    if (received) await onFile.discard(received.value);
  };
  ctx.req.pipe(parser);
  try {
    await finished;
  } catch (error) {
    ctx.req.unpipe(parser);
    // ends the part stream too, so the file consumer fails and removes what it wrote; without it a
    // client that went away would leave the consumer waiting for bytes forever
    parser.destroy(error as Error);
    // the rest of the body is not read: close the connection after answering
    ctx.set('connection', 'close');
    await discardReceived();
    throw error;
  }
  const received = file ? await file : undefined;
  if (failure) {
    await discardReceived();
    throw failure;
  }
  return { fields, file: received };
}

/** One text field, or undefined; given twice is a 400. */
export function singleField(fields: Record<string, string[]>, name: string): string | undefined {
  const values = fields[name];
  if (!values) return undefined;
  if (values.length > 1) throw illegalArguments(`field '${name}' must be given once`);
  return values[0];
}
