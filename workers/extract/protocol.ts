import type { TextKind } from '../../src/modules/fulltext/index.js';

/** Messages between a text extraction job and its extraction process (workers/extract/extract-child.ts). */

export interface ExtractStart {
  type: 'start';
  inputPath: string;
  fileName: string;
  kind: TextKind;
  /** characters kept at most: the rest is dropped and the text marked truncated */
  maxChars: number;
}

/** The text as the index keeps it (`storableText`). */
export type ExtractMessage = { type: 'text'; text: string; truncated: boolean };
