import type { ExtractedText, TextExtractionRequest } from '../../src/modules/fulltext/index.js';

/** Messages between a text extraction job and its extraction process (workers/extract/extract-child.ts). */

export type ExtractStart = { type: 'start' } & TextExtractionRequest;

/** The text as the index keeps it (`storableText`), with what was left out and why. */
export type ExtractMessage = { type: 'text' } & ExtractedText;
