import type { Config } from '../../src/config.js';
import type { TextExtractor } from '../../src/modules/fulltext/index.js';
import type { ChildPool } from '../../workers/child/bounded-child.js';
import { extractionPool, textExtractor } from '../../workers/extract/extract-process.js';

/** The workers' text extractor over one warm extraction process, for tests that call the extraction job's steps directly (close the pool after). */
export function extractionProcess(config: Config): { pool: ChildPool; extractor: TextExtractor } {
  const pool = extractionPool(config.FULLTEXT_EXTRACT_MEMORY_MB, 1);
  return { pool, extractor: textExtractor(pool, config.FULLTEXT_EXTRACT_TIMEOUT_MS) };
}
