/**
 * An encrypted PDF that opens with an empty password, written out unencrypted by qpdf (compiled to
 * WebAssembly, run inside the bounded child that asks, so its memory is that child's). Readers open
 * such a file without asking whichever of its two passwords is the empty one; pdf.js tries an empty
 * password as the user password only (a file whose *owner* password is empty, as pdf.js's own
 * `pr6531_2.pdf`, it refuses), and pdf-lib decrypts nothing. qpdf tries the empty password as either.
 * Loaded only when an encrypted input comes.
 */
import { createRequire } from 'node:module';

interface QpdfInstance {
  callMain(args: string[]): number;
  FS: { writeFile(path: string, data: Uint8Array): void; readFile(path: string): Uint8Array };
}
type QpdfFactory = (options: { locateFile: () => string; noInitialRun: boolean }) => Promise<QpdfInstance>;

/** The input without its encryption, or why qpdf could not open it with an empty password. */
export type Decryption = { bytes: Uint8Array } | { reason: string };

export async function decryptWithEmptyPassword(input: Uint8Array): Promise<Decryption> {
  const require = createRequire(import.meta.url);
  const wasm = require.resolve('@neslinesli93/qpdf-wasm/dist/qpdf.wasm');
  const createQpdf = (await import('@neslinesli93/qpdf-wasm')).default as unknown as QpdfFactory;
  // the build binds its output to console.log and console.error when an instance is made: its
  // messages ("invalid password") are kept for the answer instead of reaching the child's stderr
  const said: string[] = [];
  const { log, error } = console;
  console.log = console.error = (...words: unknown[]) => said.push(words.join(' '));
  let qpdf: QpdfInstance;
  try {
    // a fresh instance per file: qpdf's main leaves its state behind, and one takes ~20 ms to make
    qpdf = await createQpdf({ locateFile: () => wasm, noInitialRun: true });
  } finally {
    console.log = log;
    console.error = error;
  }
  try {
    qpdf.FS.writeFile('/input.pdf', input);
    const status = qpdf.callMain(['--password=', '--decrypt', '/input.pdf', '/output.pdf']);
    // 3 is qpdf's "succeeded with warnings": a damaged file it repaired on the way
    if (status !== 0 && status !== 3) return { reason: said.join('; ').replace(/^.*?\/input\.pdf: /, '') || `qpdf ended with status ${status}` };
    return { bytes: qpdf.FS.readFile('/output.pdf') };
  } catch (error) {
    // qpdf aborted (its WebAssembly memory exhausted, a file it cannot parse at all): the caller keeps pdf.js's own answer
    return { reason: `qpdf failed: ${(error as Error).message}` };
  }
}

/** What pdf.js's `getDocument` returns, as far as opening and letting go of a document go. */
interface LoadingTask<Document> {
  promise: Promise<Document>;
  destroy(): Promise<void>;
}

/**
 * A PDF opened by pdf.js (`load` is its `getDocument` with the caller's options); one that pdf.js
 * refuses for a password is opened again from qpdf's decryption when an empty password opens it. A
 * file that needs a password still fails with pdf.js's `PasswordException`. The caller destroys the
 * task it gets back; a failed task is destroyed here.
 */
export async function openPdf<Document>(bytes: Uint8Array, load: (data: Uint8Array) => LoadingTask<Document>): Promise<{ task: LoadingTask<Document>; document: Document }> {
  const opened = async (data: Uint8Array) => {
    // pdf.js takes the buffer over (detaches it): it gets a copy of its own
    const task = load(new Uint8Array(data));
    try {
      return { task, document: await task.promise };
    } catch (error) {
      await task.destroy();
      throw error;
    }
  };
  try {
    return await opened(bytes);
  } catch (error) {
    if ((error as Error).name !== 'PasswordException') throw error;
    const decryption = await decryptWithEmptyPassword(bytes);
    if (!('bytes' in decryption)) throw error;
    return opened(decryption.bytes);
  }
}
