/**
 * OCR in the extraction process (DESIGN §12): tesseract.js with the models of @tesseract.js-data/<language>
 * (nothing is downloaded), one recognizer kept warm per process for the languages asked, each image
 * within its time bound: over it the recognizer is ended (its work cannot be interrupted otherwise)
 * and a new one is made for the next image.
 */
import { symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createWorker, OEM, type Worker } from 'tesseract.js';
import type { OcrSettings } from '../../src/modules/fulltext/index.js';
import { makeTempFolder, removeTempFolder } from '../../src/temp-folders.js';

const require = createRequire(import.meta.url);

let current: { languages: string; worker: Promise<Worker> } | undefined;

/**
 * A recognizer of `languages`. tesseract.js reads every model from one directory, and each language's
 * package has its own: a folder of this process links them together while the recognizer loads them
 * (into its memory: it reads no file after), then goes. Only a process killed while loading leaves it,
 * and the next load removes it (src/temp-folders.ts).
 */
async function loadRecognizer(languages: string[]): Promise<Worker> {
  const langPath = await makeTempFolder('crs-ocr-models-');
  try {
    for (const language of languages) {
      const model = require(`@tesseract.js-data/${language}`) as { langPath: string };
      await symlink(path.join(model.langPath, `${language}.traineddata.gz`), path.join(langPath, `${language}.traineddata.gz`));
    }
    return await createWorker(languages, OEM.LSTM_ONLY, { langPath, gzip: true, cacheMethod: 'none' });
  } finally {
    await removeTempFolder(langPath);
  }
}

function recognizer(languages: string[]): Promise<Worker> {
  const key = languages.join('+');
  if (current?.languages !== key) {
    void current?.worker.then((worker) => worker.terminate()).catch(() => undefined);
    current = { languages: key, worker: loadRecognizer(languages) };
  }
  return current.worker;
}

/** The text of one image (PNG, JPEG, TIFF, WebP bytes), or undefined when it took longer than its bound (or OCR's `stopBy`). */
export async function recognizeText(image: Buffer, settings: OcrSettings): Promise<string | undefined> {
  const worker = await recognizer(settings.languages);
  let timer: NodeJS.Timeout | undefined;
  const boundMs = Math.max(0, Math.min(settings.pageTimeoutMs, settings.stopBy - Date.now()));
  const overtime = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), boundMs)));
  const text = await Promise.race([worker.recognize(image).then((result) => result.data.text), overtime]);
  clearTimeout(timer);
  if (text === undefined) {
    current = undefined;
    await worker.terminate().catch(() => undefined);
  }
  return text;
}
