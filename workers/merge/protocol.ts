/** Messages between a merge job and its merge process (workers/merge/merge-child.ts). */
import type { MergeRequest } from '../../src/modules/conversion/index.js';
import type { FinalMessage, ReadyMessage } from '../child/bounded-child.js';

export type StartMessage = { type: 'start' } & MergeRequest;

export type ChildMessage =
  | ReadyMessage
  /** input `index` was added with its `pages` */
  | { type: 'merged'; index: number; pages: number }
  /** the result is written: its page count */
  | { type: 'written'; pages: number }
  | FinalMessage;
