import type { Config } from '../../config.js';
import type { ConversionLimit, RepositoryLimits } from '../repositories/repository.entity.js';

/** Share of the conversion limit that a repository's Conversion limit setting allows (spec "Repository limits"). */
export const conversionLimitShare: Readonly<Record<ConversionLimit, number>> = { LOW: 0.2, MEDIUM: 0.5, HIGH: 0.8, UNLIMITED: 1 };

export interface InputFile {
  name: string;
  size: number;
}

/** A limit was broken: the spec's message with its placeholders filled (reason code illegalArguments). */
export class LimitExceeded extends Error {
  readonly reasonCode = 'illegalArguments';
  constructor(message: string) {
    super(message);
    this.name = 'LimitExceeded';
  }
}

/** A repository limit when set (never above the conversion limit), else the conversion limit. */
const bounded = (repository: number | undefined, conversion: number) => Math.min(repository ?? conversion, conversion);

/**
 * Number, size and total size of a job's input files against the repository limits, then the conversion
 * limits (spec Errors 4). Throws LimitExceeded with the spec's message.
 */
export function checkInputFiles(files: InputFile[], limits: RepositoryLimits, config: Config): void {
  const maxFiles = bounded(limits.maxNumberOfInputFiles, config.CONV_MAX_NUMBER_OF_INPUT_FILES);
  if (files.length > maxFiles) {
    throw new LimitExceeded(
      `more input files attached (${files.length}) than allowed per job (${maxFiles}) or in general (${config.CONV_MAX_NUMBER_OF_INPUT_FILES}): ${files.map((f) => f.name).join(', ')}`,
    );
  }
  const maxSize = bounded(limits.maxInputFileSize, config.CONV_MAX_INPUT_FILE_SIZE);
  for (const file of files) {
    if (!(file.size > 0) || file.size > maxSize) {
      throw new LimitExceeded(
        `the size of input resource ${file.name} (${file.size}) is either unknown, zero, above the job-based maximum ${maxSize} or above the maximum ${config.CONV_MAX_INPUT_FILE_SIZE}`,
      );
    }
  }
  const maxTotal = bounded(limits.maxTotalInputFileSize, config.CONV_MAX_TOTAL_INPUT_FILE_SIZE);
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (total > maxTotal) {
    throw new LimitExceeded(
      `the size of all input resources ${files.map((f) => f.name).join(', ')} (${total}) exceeds the job-based total maximum ${maxTotal} or the total maximum ${config.CONV_MAX_TOTAL_INPUT_FILE_SIZE}`,
    );
  }
}

export interface PdfCounts {
  file: string;
  /** painting operations per page, page 1 first */
  objects: number[];
}

export type PdfDecision =
  | { action: 'render'; placeholders: { page: number; text: string }[] }
  /** LOW_PRIORITY: back to the queue with a lower priority (once; the next run renders) */
  | { action: 'lowerPriority'; reason: string };

interface PdfMaxima {
  pages: number;
  perPage: number;
  total: number;
}

const pageViolation = (file: string, pages: number, maxPages: number) =>
  pages > maxPages ? `more pages (${pages}) than allowed (${maxPages}) on input resource ${file}` : undefined;

/**
 * The page count against the conversion limit, as soon as the document opens and before any page is
 * parsed (a 20,000-page document took 111 s to count): throws LimitExceeded with the spec's message.
 * The conversion limits come before the repository's, whose page share decidePdf checks with the
 * objects (a document over both is refused with the conversion limit broken first).
 */
export function checkPdfPageCount(file: string, pages: number, config: Config): void {
  const over = pageViolation(file, pages, config.CONV_MAX_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES);
  if (over) throw new LimitExceeded(over);
}

/**
 * The first limit the counts break, as the spec's message; undefined when none. The total's message
 * names both maxima, whichever of them `max` is.
 */
function firstViolation({ file, objects }: PdfCounts, max: PdfMaxima, totals: { repository: number; hard: number }): string | undefined {
  const pages = pageViolation(file, objects.length, max.pages);
  if (pages) return pages;
  const page = objects.findIndex((n) => n > max.perPage);
  if (page >= 0) return `more objects (${objects[page]}) on page ${page + 1} than allowed (${max.perPage}) on input resource ${file}`;
  const total = objects.reduce((sum, n) => sum + n, 0);
  if (total > max.total) return `more objects in total than the repository maximum ${totals.repository} for ${file} with ${total} objects, with a hard limit ${totals.hard}`;
  return undefined;
}

/**
 * Page count and painting operations of a PDF against the conversion limits (always fatal), then
 * against the repository's Conversion limit (a share of them) with its Conversion strategy: ERROR
 * rejects, REPLACE puts placeholder pages in place of the pages over the limit (pages past the page
 * limit, pages with too many objects, and the pages after the running total passed the total limit),
 * LOW_PRIORITY sends the job to the back of the queue once and then renders it whole.
 */
export function decidePdf(counts: PdfCounts, limits: RepositoryLimits, config: Config, alreadyLowered: boolean): PdfDecision {
  const hard: PdfMaxima = {
    pages: config.CONV_MAX_PDF_TO_IMAGE_MAX_NUMBER_OF_PAGES,
    perPage: config.CONV_MAX_PDF_TO_IMAGE_THRESHOLD,
    total: config.CONV_MAX_PDF_TO_IMAGE_TOTAL_THRESHOLD,
  };
  const share = conversionLimitShare[limits.conversionLimit ?? 'UNLIMITED'];
  const repository: PdfMaxima = {
    pages: Math.floor(hard.pages * share),
    perPage: Math.floor(hard.perPage * share),
    total: Math.floor(hard.total * share),
  };
  const totals = { repository: repository.total, hard: hard.total };
  const overHard = firstViolation(counts, hard, totals);
  if (overHard) throw new LimitExceeded(overHard);
  const overRepository = firstViolation(counts, repository, totals);
  if (!overRepository) return { action: 'render', placeholders: [] };
  switch (limits.conversionStrategy ?? 'ERROR') {
    case 'ERROR':
      throw new LimitExceeded(overRepository);
    case 'LOW_PRIORITY':
      return alreadyLowered ? { action: 'render', placeholders: [] } : { action: 'lowerPriority', reason: overRepository };
    case 'REPLACE': {
      const placeholders: { page: number; text: string }[] = [];
      let running = 0;
      counts.objects.forEach((n, index) => {
        const page = index + 1;
        running += n;
        let text: string | undefined;
        if (page > repository.pages) text = `Page ${page} not rendered: the document has more pages (${counts.objects.length}) than allowed (${repository.pages}).`;
        else if (n > repository.perPage) text = `Page ${page} not rendered: it has more objects (${n}) than allowed (${repository.perPage}).`;
        else if (running > repository.total) text = `Page ${page} not rendered: the document has more objects in total than allowed (${repository.total}).`;
        if (text) placeholders.push({ page, text });
      });
      return { action: 'render', placeholders };
    }
  }
}
