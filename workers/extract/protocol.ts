/** Messages between a text extraction job and its extraction process (workers/extract/extract-child.ts). */

export type ChildKind = 'pdf' | 'docx';

export interface ExtractStart {
  type: 'start';
  inputPath: string;
  fileName: string;
  kind: ChildKind;
  /** characters kept at most: the rest is dropped and the text marked truncated */
  maxChars: number;
}

export type ExtractMessage = { type: 'text'; text: string; truncated: boolean };
